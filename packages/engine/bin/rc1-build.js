#!/usr/bin/env node
// Tiny shim to the compiled CLI (dist/cli.js, built by `npm run build`).
import { main } from '../dist/cli.js';

process.exitCode = await main(process.argv.slice(2));
