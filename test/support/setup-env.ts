// Runs before every integration test file loads its modules: config/ reads these once.
import fs from "fs";
import os from "os";
import path from "path";
import { generateToken } from "../../lib/crypto/tokens";

process.env.NODE_ENV = "test";
process.env.DATA_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-int-"));
process.env.PORT = "0";
process.env.HEALTH_PORT = "0";
process.env.METRICS_PORT = "0";
process.env.LOG_LEVEL = process.env.TEST_LOG_LEVEL ?? "warn";
process.env.LOG_FORMAT = "text";
process.env.GITLAB_ROOT_TOKEN = generateToken();
process.env.GITLAB_ROOT_PASSWORD = "root-password-123";
process.env.SECRETS_KEY = "integration-test-secrets-key";
process.env.INTERNAL_API_SECRET = "integration-internal-secret-0123456789abcdef";
