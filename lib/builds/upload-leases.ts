/**
 * An artifacts upload in three steps (docs/architecture.md#artifacts), so that its bytes go from
 * the client straight into the artifact store and never through the transporter:
 *
 * 1. the gateway asks the builds service to authorize it (the build exists, is not erased, the
 *    file name is valid): an UploadLease, before a byte of the body is read;
 * 2. the gateway streams the body into a temporary object of the store, under the size limit
 *    (ArtifactStorage.writeUpload), and removes it on any failure or a client that goes away;
 * 3. the gateway asks the builds service to commit it (UploadCommit): it moves the object into
 *    place and points the build record at it with the same compare-and-set as every build write.
 *
 * Nothing is visible before the commit, and a commit that fails removes what it moved.
 */

/** What the builds service answers to step 1. */
export interface UploadLease {
	build_id: number;
	project_id: number;
	/** The checked file name, to send back with the commit. */
	filename: string;
}

/** Step 3's parameters: the lease's build and file name, and the store's name of the complete upload. */
export interface UploadCommit {
	build_id: number;
	filename: string;
	upload: string;
	size: number;
}

/** Action parameters of step 3 (the file name and the upload's name are checked again by the service and the store). */
export const UPLOAD_COMMIT_PARAMS = {
	build_id: { type: "number", integer: true, positive: true },
	filename: { type: "string", max: 1024 },
	upload: { type: "string", max: 128 },
	size: { type: "number", integer: true, min: 0 },
} as const;
