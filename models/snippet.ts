/** Project snippets as stored. */

export interface SnippetDoc {
	id: number;
	project_id: number;
	title: string;
	file_name: string;
	/** The `code` parameter, byte-exact. */
	content: string;
	visibility_level: number;
	author_id: number;
	/** Snippets here never expire; kept for the entity's `expires_at`. */
	expires_at: string | null;
	created_at: string;
	updated_at: string;
}

export const snippetsCollection = { indexes: [{ fields: { project_id: 1, created_at: -1 } }] } as const;
