/**
 * A zip archive of stored (uncompressed) files, enough for demo artifacts that `unzip -l` lists
 * and real clients open: local headers, the central directory and its end record (no zip64, so
 * under 4 GiB in all).
 */
import zlib from "zlib";

export interface ZipEntry {
	name: string;
	data: Buffer;
}

/** DOS date and time of 2017-01-01 00:00 (zip stores local time in DOS format). */
const DOS_TIME = 0;
const DOS_DATE = ((2017 - 1980) << 9) | (1 << 5) | 1;

/**
 * The fields a local header and its central directory entry share, in the same order from
 * `version needed` to the name's length (each header's extra field is empty: the zeros it holds).
 */
function describeFile(header: Buffer, at: number, crc: number, size: number, nameLength: number): void {
	header.writeUInt16LE(10, at); // version needed: 1.0 (stored)
	header.writeUInt16LE(0x0800, at + 2); // flags: UTF-8 names
	header.writeUInt16LE(0, at + 4); // method: stored
	header.writeUInt16LE(DOS_TIME, at + 6);
	header.writeUInt16LE(DOS_DATE, at + 8);
	header.writeUInt32LE(crc, at + 10);
	header.writeUInt32LE(size, at + 14); // compressed
	header.writeUInt32LE(size, at + 18); // uncompressed
	header.writeUInt16LE(nameLength, at + 22);
}

export function storedZip(entries: ZipEntry[]): Buffer {
	const locals: Buffer[] = [];
	const centrals: Buffer[] = [];
	let offset = 0;
	for (const { name, data } of entries) {
		const fileName = Buffer.from(name, "utf8");
		const crc = zlib.crc32(data);
		const local = Buffer.alloc(30);
		local.writeUInt32LE(0x04034b50, 0);
		describeFile(local, 4, crc, data.length, fileName.length);
		const central = Buffer.alloc(46);
		central.writeUInt32LE(0x02014b50, 0);
		central.writeUInt16LE((3 << 8) | 20, 4); // made by: Unix, 2.0
		describeFile(central, 6, crc, data.length, fileName.length);
		central.writeUInt32LE((0o100644 << 16) >>> 0, 38); // external attributes: a regular file, rw-r--r--
		central.writeUInt32LE(offset, 42);
		locals.push(local, fileName, data);
		centrals.push(central, fileName);
		offset += local.length + fileName.length + data.length;
	}
	const directory = Buffer.concat(centrals);
	const end = Buffer.alloc(22);
	end.writeUInt32LE(0x06054b50, 0);
	end.writeUInt16LE(entries.length, 8);
	end.writeUInt16LE(entries.length, 10);
	end.writeUInt32LE(directory.length, 12);
	end.writeUInt32LE(offset, 16);
	return Buffer.concat([...locals, directory, end]);
}
