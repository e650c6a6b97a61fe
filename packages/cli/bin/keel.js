#!/usr/bin/env node
// The keel command. The flag parser loads first; the kernel only when a run needs it.
import("../dist/main.js")
