/** Validation of new users and projects, as GitLab 8.x model errors (`{"field":["…"]}`). */
import { VISIBILITY_LEVELS } from "./access";
import type { ProjectDoc } from "../../models/project";

type Errors = Record<string, string[]>;

const USERNAME = /^[a-zA-Z0-9_.][a-zA-Z0-9_.-]*$/;
const EMAIL = /^[^\s@]+@[^\s@]+$/;
const PROJECT_PATH = /^[a-zA-Z0-9_.][a-zA-Z0-9_.-]*$/;

function add(errors: Errors, field: string, message: string) {
	(errors[field] ??= []).push(message);
}

export function validateNewUser(p: { email: string; password: string; username: string; name: string }): Errors | null {
	const errors: Errors = {};
	if (!p.username.trim()) add(errors, "username", "can't be blank");
	else if (!USERNAME.test(p.username) || /\.(git|atom)$/.test(p.username))
		add(errors, "username", "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.git' or '.atom'.");
	if (!p.name.trim()) add(errors, "name", "can't be blank");
	if (!EMAIL.test(p.email)) add(errors, "email", "is invalid");
	if (p.password.length < 8) add(errors, "password", "is too short (minimum is 8 characters)");
	return Object.keys(errors).length ? errors : null;
}

/** GitLab's `parameterize` of a name into a path. */
export function pathFromName(name: string): string {
	return name
		.trim()
		.toLowerCase()
		.replace(/[^a-z0-9_.-]+/g, "-")
		.replace(/^-+|-+$/g, "");
}

export function validateNewProject(
	p: { name: string; path?: string; description?: string; visibility_level?: number; public_builds?: boolean },
	namespace: string,
): {
	errors: Errors | null;
	project?: Pick<ProjectDoc, "name" | "path" | "namespace" | "path_with_namespace" | "description" | "visibility_level" | "public_builds">;
} {
	const errors: Errors = {};
	const name = p.name.trim();
	const path = (p.path ?? "").trim() || pathFromName(name);
	if (!name) add(errors, "name", "can't be blank");
	else if (!/^[\p{L}\p{N}_][\p{L}\p{N}_. -]*$/u.test(name))
		add(errors, "name", "can contain only letters, digits, '_', '.', dash and space. It must start with letter, digit or '_'.");
	if (!path) add(errors, "path", "can't be blank");
	else if (!PROJECT_PATH.test(path) || /\.(git|atom)$/.test(path))
		add(errors, "path", "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'");
	const visibility = p.visibility_level ?? 0;
	if (!(VISIBILITY_LEVELS as readonly number[]).includes(visibility)) add(errors, "visibility_level", "is not included in the list");
	if (Object.keys(errors).length) return { errors };
	return {
		errors: null,
		project: {
			name,
			path,
			namespace,
			path_with_namespace: `${namespace}/${path}`,
			description: p.description ?? null,
			visibility_level: visibility,
			public_builds: p.public_builds ?? true,
		},
	};
}
