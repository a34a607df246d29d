/** docs/api.md's API v4 section names every endpoint the gateway mounts under /api/v4 (gateway/routes/v4). */
import fs from "fs";
import path from "path";
import { v4RouteTables } from "../../../../gateway/routes";
import { ROOT } from "../../../support/processes";

it("names every v4 endpoint in the API v4 section", () => {
	const api = fs.readFileSync(path.join(ROOT, "docs/api.md"), "utf8");
	const v4 = api.slice(api.indexOf('<a id="v4"></a>'));
	expect(v4.length).toBeGreaterThan(1000);
	const endpoints = v4RouteTables.flatMap(t => Object.keys(t.api ?? {}).map(alias => alias.split(/\s+/).join(" ")));
	expect(endpoints.length).toBeGreaterThan(50);
	// A ref may hold slashes (`*ref_name` in the route): the docs name it as GitLab does, `:ref_name`.
	const documented = (endpoint: string) => v4.includes(`\`${endpoint.replace("*ref_name", ":ref_name")}\``);
	// The /services alias of each integrations route is named once, beside /integrations.
	expect(endpoints.filter(e => !documented(e) && !e.includes("/services"))).toEqual([]);
});
