/**
 * Where artifacts and traces live (docs/configuration.md#artifacts): files under
 * DATA_DIR/artifacts (a volume `api` and `builds` share in a cluster), or an S3-compatible bucket.
 * Every setting is read whichever store is chosen, so a bad value is named at start-up either way.
 */
import path from "path";
import { bool, ConfigError, oneOf, str, url, type Env } from "./parse";

const ARTIFACT_STORES = ["filesystem", "s3"] as const;

/** The bucket's settings that the Secret carries (the bucket and its credentials). */
export const S3_SECRET_SETTINGS = ["ARTIFACTS_S3_BUCKET", "ARTIFACTS_S3_ACCESS_KEY_ID", "ARTIFACTS_S3_SECRET_ACCESS_KEY"];

/** S3's bucket names (the rules every S3 API shares): 3 to 63 of lower-case letters, digits, dots and hyphens. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** A key prefix of safe characters (AWS's "safe" set), ending in "/" once read. */
const PREFIX = /^[A-Za-z0-9!_.*'()/-]{1,200}$/;

function bucketName(env: Env): string {
	const bucket = str(env, "ARTIFACTS_S3_BUCKET");
	if (bucket && !BUCKET.test(bucket)) throw new ConfigError("ARTIFACTS_S3_BUCKET", bucket, "an S3 bucket name (3 to 63 of a-z, 0-9, '.' and '-')");
	return bucket;
}

function keyPrefix(env: Env): string {
	const prefix = str(env, "ARTIFACTS_S3_PREFIX").replace(/^\/+/, "");
	if (!prefix) return "";
	if (!PREFIX.test(prefix) || prefix.split("/").some(part => part === "." || part === ".."))
		throw new ConfigError("ARTIFACTS_S3_PREFIX", prefix, "a key prefix of letters, digits and !_.*'()/- (such as gitlab/artifacts/)");
	return prefix.endsWith("/") ? prefix : `${prefix}/`;
}

export function artifactStorage(env: Env, dataDir: string) {
	const store = oneOf(env, "ARTIFACTS_STORE", ARTIFACT_STORES, "filesystem");
	const endpoint = url(env, "ARTIFACTS_S3_ENDPOINT", ["http", "https"]).replace(/\/+$/, "");
	if (endpoint && (new URL(endpoint).username || new URL(endpoint).password))
		throw new ConfigError(
			"ARTIFACTS_S3_ENDPOINT",
			"<hidden>",
			"a URL without credentials (they go in ARTIFACTS_S3_ACCESS_KEY_ID and ARTIFACTS_S3_SECRET_ACCESS_KEY)",
		);
	const s3 = {
		/** Empty: AWS's own endpoint for the region. */
		endpoint,
		region: str(env, "ARTIFACTS_S3_REGION", "us-east-1"),
		bucket: bucketName(env),
		/** Prepended to every key ("" or ending in "/"), so that one bucket can hold several deployments. */
		prefix: keyPrefix(env),
		/** Both empty: the SDK's own credential chain (an instance or pod role, AWS_* variables of the SDK). */
		accessKeyId: str(env, "ARTIFACTS_S3_ACCESS_KEY_ID"),
		secretAccessKey: str(env, "ARTIFACTS_S3_SECRET_ACCESS_KEY"),
		/** `endpoint/bucket/key` rather than `bucket.endpoint/key`: what most servers other than AWS want. */
		forcePathStyle: bool(env, "ARTIFACTS_S3_FORCE_PATH_STYLE", !!endpoint),
		/** GitLab's `proxy_download`: true streams downloads through the gateway; false redirects to a presigned URL. */
		proxyDownload: bool(env, "ARTIFACTS_S3_PROXY_DOWNLOAD", true),
		/** Where clients reach the bucket, for presigned URLs (empty: the endpoint). */
		publicEndpoint: url(env, "ARTIFACTS_S3_PUBLIC_ENDPOINT", ["http", "https"]).replace(/\/+$/, ""),
	};
	if (!s3.accessKeyId !== !s3.secretAccessKey)
		throw new ConfigError(
			s3.accessKeyId ? "ARTIFACTS_S3_SECRET_ACCESS_KEY" : "ARTIFACTS_S3_ACCESS_KEY_ID",
			"",
			"set together with its pair, or both left empty",
		);
	if (store === "s3" && !s3.bucket) throw new ConfigError("ARTIFACTS_S3_BUCKET", "", "a bucket name whenever ARTIFACTS_STORE=s3");
	return {
		artifactStore: store,
		/** The filesystem store's root (and what `npm run artifacts:to-s3` copies from). */
		artifactsDir: path.join(dataDir, "artifacts"),
		s3,
	};
}

export type S3Settings = ReturnType<typeof artifactStorage>["s3"];
