-- SkillVersion is insert-only: a published version never changes once conversations can reference it.
-- (Deleting still works, e.g. through the cascade from Skill.) The trigger is created by the migrations.
CREATE OR REPLACE FUNCTION "skill_version_immutable"() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'skill versions are immutable'
        USING ERRCODE = 'P0001', HINT = 'Create a new SkillVersion instead of updating one.';
END;
$$;
