// ESLint: typescript-eslint's recommended type-checked rules, formatting left to Prettier
// (.prettierrc.json), and one rule Prettier cannot enforce: no line past the configured width,
// comments and strings included. `npm run lint` runs both.
import js from "@eslint/js";
import stylistic from "@stylistic/eslint-plugin";
import prettier from "eslint-config-prettier";
import tseslint from "typescript-eslint";

export default tseslint.config(
	{ ignores: ["dist/", "node_modules/", "coverage/", "data/", ".tmp/", "bench/results/", "**/*.js", "**/*.mjs", "test/support/openapi/"] },
	js.configs.recommended,
	...tseslint.configs.recommendedTypeChecked,
	prettier,
	{
		languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
		plugins: { "@stylistic": stylistic },
		rules: {
			"@stylistic/max-len": ["error", { code: 160, tabWidth: 4, ignoreUrls: true, ignoreRegExpLiterals: true }],
			// `_`-prefixed parameters are placeholders a signature needs.
			"@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
		},
	},
	{
		// Tests and benchmarks read JSON answers as they come (`res.body.id`): `any` there is the shape
		// of the wire, not a hole in the product's types. Every other rule applies to them as well.
		files: ["test/**/*.ts", "bench/**/*.ts"],
		rules: {
			"@typescript-eslint/no-explicit-any": "off",
			"@typescript-eslint/no-unsafe-member-access": "off",
			"@typescript-eslint/no-unsafe-assignment": "off",
			"@typescript-eslint/no-unsafe-call": "off",
			"@typescript-eslint/no-unsafe-argument": "off",
			"@typescript-eslint/no-unsafe-return": "off",
		},
	},
);
