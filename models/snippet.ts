/** Project snippets as stored. */

export interface SnippetDoc {
	id: number;
	project_id: number;
	title: string;
	/** Its first file (the only one before v4): what v3 shows, reads and writes. */
	file_name: string;
	/** The `code` parameter, byte-exact. */
	content: string;
	/** v4's: every file's path in order, the first being `file_name` (absent: that one only). Lists read it without the contents. */
	file_paths?: string[];
	/** v4's: the files after the first (absent: none). */
	more_files?: { path: string; content: string }[];
	/** v4's description (absent or null: none). */
	description?: string | null;
	visibility_level: number;
	author_id: number;
	/** Snippets here never expire; kept for the entity's `expires_at`. */
	expires_at: string | null;
	created_at: string;
	updated_at: string;
}

export const snippetsCollection = { indexes: [{ fields: { project_id: 1, created_at: -1 } }] } as const;
