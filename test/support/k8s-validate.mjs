// Validates Kubernetes objects with kubernetes-models (schemas generated from the Kubernetes
// OpenAPI spec). kubernetes-models is ESM-only, so jest (CommonJS) runs this as a child process:
// stdin: a JSON array of { module, object } (module: where the object's model is, see k8s-schema.ts);
// stdout: a JSON array of { kind, name, errors } (one per object).
const input = JSON.parse(
	await new Promise(resolve => {
		let text = "";
		process.stdin.setEncoding("utf8");
		process.stdin.on("data", chunk => (text += chunk));
		process.stdin.on("end", () => resolve(text));
	}),
);

const results = [];
for (const { module: modulePath, object: obj } of input) {
	const kind = obj?.kind;
	const name = obj?.metadata?.name;
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
