/**
 * Where the suite's built and installed peers stay between runs (`.ci/peers` puts them there: the
 * Go servers under bin/, the Python environments): GITLAB_V3_CI_CACHE, by default
 * ~/.cache/gitlab-v3-ci, as the .ci scripts read it.
 */
import os from "os";
import path from "path";

export const PEER_CACHE = process.env.GITLAB_V3_CI_CACHE || path.join(os.homedir(), ".cache/gitlab-v3-ci");
