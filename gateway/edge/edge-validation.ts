/**
 * Action parameters checked at the gateway, before anything else looks at them: the action's own
 * `params` schema (from the service registry, so it is the same schema in one process or many),
 * compiled once with the broker's validator. Values are converted in place (`"2"` → 2 where the
 * schema says so), so what reaches the cache key and the service is what was checked: a `page`
 * of a megabyte of digits is a 400 here, or at most the number it spells.
 */
import { Errors } from "moleculer";

type Check = ((params: object, opts?: object) => true | object[] | Promise<true | object[]>) & { async?: boolean };

interface ValidatorLike {
	compile(schema: object): Check;
}

export interface ActionLike {
	name: string;
	params?: object;
}

export class EdgeValidator {
	private readonly checks = new Map<string, Check | null>();

	constructor(private readonly validator: ValidatorLike) {}

	/** Checks and converts `params` in place; a ValidationError (400 at the gateway) when they do not fit. */
	async validate(action: ActionLike, params: object): Promise<void> {
		const check = this.checkOf(action);
		if (!check) return;
		const result = check.async ? await check(params) : check(params);
		if (result !== true) throw new Errors.ValidationError("Parameters validation error!", "VALIDATION_ERROR", result as object[]);
	}

	/**
	 * Checks and converts `params` in place at once, as `validate` does; false when they do not
	 * fit or the check cannot answer at once (a schema with async rules), which `validate` then tells.
	 */
	passesNow(action: ActionLike, params: object): boolean {
		const check = this.checkOf(action);
		return !check || (!check.async && check(params) === true);
	}

	/** The action's compiled schema (null: it declares none), compiled on its first request. */
	private checkOf(action: ActionLike): Check | null {
		let check = this.checks.get(action.name);
		if (check === undefined) {
			check = action.params && typeof action.params === "object" ? this.validator.compile(action.params) : null;
			this.checks.set(action.name, check);
		}
		return check;
	}

	/** Schemas change when services are redeployed. */
	forget(): void {
		this.checks.clear();
	}
}
