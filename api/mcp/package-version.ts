import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../lib/config';

/** The service's version (package.json), as MCP server and client info carry it. */
export const PACKAGE_VERSION = (JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string }).version;
