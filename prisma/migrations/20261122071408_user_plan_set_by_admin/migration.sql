-- AlterTable
ALTER TABLE "User" ADD COLUMN     "planSetByAdmin" BOOLEAN NOT NULL DEFAULT false;
