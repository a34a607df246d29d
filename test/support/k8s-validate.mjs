// Validates Kubernetes objects with kubernetes-models (schemas generated from the Kubernetes
// OpenAPI spec). kubernetes-models is ESM-only, so jest (CommonJS) runs this as a child process:
// stdin: a JSON array of objects; stdout: a JSON array of { kind, name, errors } (one per object).
const input = JSON.parse(
	await new Promise(resolve => {
		let text = "";
		process.stdin.setEncoding("utf8");
		process.stdin.on("data", chunk => (text += chunk));
		process.stdin.on("end", () => resolve(text));
	}),
);

const results = [];
for (const obj of input) {
	const kind = obj?.kind;
	const name = obj?.metadata?.name;
	// "apps/v1" → kubernetes-models/apps/v1/Deployment; the core group "v1" → kubernetes-models/v1/Pod.
	const modulePath = `kubernetes-models/${obj?.apiVersion}/${kind}`;
	let Model;
	try {
		Model = (await import(modulePath))[kind];
	} catch {
		results.push({ kind, name, errors: [`no Kubernetes model for apiVersion ${obj?.apiVersion} kind ${kind}`] });
		continue;
	}
	try {
		new Model(obj).validate();
		results.push({ kind, name, errors: [] });
	} catch (err) {
		const details = Array.isArray(err?.errors) ? err.errors.map(e => `${e.instancePath || "/"} ${e.message}`) : [String(err?.message ?? err)];
		results.push({ kind, name, errors: details });
	}
}
process.stdout.write(JSON.stringify(results));
