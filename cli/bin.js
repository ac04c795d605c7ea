#!/usr/bin/env node
// The installed `crm` executable: runs the JavaScript build of cli/main.ts (dist/, made by
// scripts/build.mjs at `npm install` and `npm start`), so no TypeScript is transpiled at start.
// A checkout whose sources changed since the last build is rebuilt first (about a second), so a
// developer never runs stale code; CRM_SKIP_BUILD_CHECK=1 skips the check (a deployment whose
// dist/ is its artifact).
import { buildDist, isBuildFresh } from '../scripts/build.mjs';

if (process.env.CRM_SKIP_BUILD_CHECK !== '1' && !isBuildFresh()) await buildDist();
await import('../dist/cli/main.js');
