/**
 * Grape's relations between an endpoint's parameters (`exactly_one_of`, `at_least_one_of`,
 * `mutually_exclusive`), declared once as data: the action declares them (`paramGroups`, read by
 * the API description, gateway/openapi/openapi-params.ts, as `oneOf`, `anyOf` and `not`) and its handler
 * checks them with `checkParamGroups`, in the order declared, with Grape's messages. Pure.
 */
import { paramError } from "./errors";

export type ParamGroup = (
	| { readonly exactlyOneOf: readonly string[] }
	| { readonly atLeastOneOf: readonly string[] }
	| { readonly mutuallyExclusive: readonly string[] }
	/** A rule over these parameters that the action's own code checks, stated as JSON Schema for the description. */
	| { readonly jointly: readonly string[]; readonly schema: Readonly<Record<string, unknown>> }
) & {
	/** A member sent as null counts as not sent (by default any value but undefined counts). */
	readonly nullIsAbsent?: boolean;
};

/** Whether `value` counts as sent for `group`. */
const isGiven = (group: ParamGroup, value: unknown) => value !== undefined && !(group.nullIsAbsent && value === null);

/** The members of a group, whichever kind it is. */
export function groupMembers(group: ParamGroup): readonly string[] {
	if ("jointly" in group) return group.jointly;
	return "exactlyOneOf" in group ? group.exactlyOneOf : "atLeastOneOf" in group ? group.atLeastOneOf : group.mutuallyExclusive;
}

/** The first group `params` break, as Grape words it (`label_id, name are mutually exclusive`); nothing when none. */
export function checkParamGroups(groups: readonly ParamGroup[], params: object): void {
	const values = params as Record<string, unknown>;
	for (const group of groups) {
		if ("jointly" in group) continue;
		const members = groupMembers(group);
		const count = members.filter(name => isGiven(group, values[name])).length;
		const names = members.join(", ");
		if (!("atLeastOneOf" in group) && count > 1) throw paramError(`${names} are mutually exclusive`);
		if ("exactlyOneOf" in group && count === 0) throw paramError(`${names} are missing, exactly one parameter must be provided`);
		if ("atLeastOneOf" in group && count === 0) throw paramError(`${names} are missing, at least one parameter must be provided`);
	}
}
