#!/bin/sh
# Stand-in for Prisma's native schema engine, which cannot be downloaded on our machines.
# `prisma generate` only needs a path to exist; anything that would really need the engine
# must fail loudly instead of silently doing nothing. Migrations run through scripts/db.ts.
echo "The native Prisma schema engine is not available here: use npm run db:migrate / db:migrate:create." >&2
exit 1
