-- CreateTable
CREATE TABLE "McpServer" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "headers" JSONB NOT NULL DEFAULT '{}',
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "plans" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "approval" TEXT,
    "toolPolicies" JSONB NOT NULL DEFAULT '{}',
    "tools" JSONB NOT NULL DEFAULT '[]',
    "toolsReadAt" TIMESTAMPTZ(3),
    "toolsError" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "McpServer_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "McpServer_name_key" ON "McpServer"("name");

-- Not expressible in the Prisma schema: the name's form (it is part of tool ids) and the policy values.
ALTER TABLE "McpServer" ADD CONSTRAINT "McpServer_name_format" CHECK ("name" ~ '^[a-z0-9-]{1,32}$'),
    ADD CONSTRAINT "McpServer_approval_values" CHECK ("approval" IS NULL OR "approval" IN ('auto', 'confirm'));
