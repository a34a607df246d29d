/**
 * The artifact store the configuration names (ARTIFACTS_STORE, docs/configuration.md#artifacts):
 * the gateway and the builds service each open their own, over the same files or the same bucket.
 */
import type { Config } from "../../config";
import { ArtifactStore } from "./artifact-store";
import { MAX_TRACE_BYTES, type BuildFileStore } from "./artifact-storage";
import { S3ArtifactStore } from "./s3-artifact-store";

type StoreSettings = Pick<Config, "artifactStore" | "artifactsDir" | "s3" | "maxArtifactBytes">;

export function openArtifactStore(settings: StoreSettings, logger?: { warn(...args: unknown[]): void }): BuildFileStore {
	if (settings.artifactStore === "s3") return new S3ArtifactStore(settings.s3, settings.maxArtifactBytes, logger, MAX_TRACE_BYTES);
	return new ArtifactStore(settings.artifactsDir, settings.maxArtifactBytes);
}
