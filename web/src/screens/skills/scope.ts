import { api, unwrap, type Schemas } from '../../api/client';
import { canManage, type Organization } from '../../api/orgs';
import type { Skill, SkillRun, SkillVersion } from './shared';

/**
 * Whose Skills a screen shows: the person's own (/v1/skills) or an organization's (/v1/orgs/{orgId}/skills,
 * the same routes and shapes). Members of an organization read and run its Skills; admins and owners write.
 */
export interface SkillScope {
  /** The organization, absent for the person's own Skills. */
  org?: Organization;
  /** Whether the person creates, imports, publishes and sets tools here. */
  canWrite: boolean;
  /** The plan whose models the runs may use (an organization's runs use its plan). */
  planCode: string;
}

export function scopeOf(
  org: Organization | null,
  userPlanCode: string,
): SkillScope {
  return org
    ? { org, canWrite: canManage(org), planCode: org.plan.code }
    : { canWrite: true, planCode: userPlanCode };
}

type CreateBody = Schemas['CreateSkillDto'];
type PublishBody = Schemas['PublishVersionDto'];
type Page = Schemas['SkillPageDto'];

export async function listSkills(
  scope: SkillScope,
  query: { limit: number; cursor?: string },
): Promise<Page> {
  return scope.org
    ? unwrap(
        await api.GET('/v1/orgs/{orgId}/skills', {
          params: { path: { orgId: scope.org.id }, query },
        }),
      )
    : unwrap(await api.GET('/v1/skills', { params: { query } }));
}

export async function getSkill(scope: SkillScope, id: string): Promise<Skill> {
  return scope.org
    ? unwrap(
        await api.GET('/v1/orgs/{orgId}/skills/{id}', {
          params: { path: { orgId: scope.org.id, id } },
        }),
      )
    : unwrap(await api.GET('/v1/skills/{id}', { params: { path: { id } } }));
}

export async function createSkill(
  scope: SkillScope,
  body: CreateBody,
): Promise<Skill> {
  return scope.org
    ? unwrap(
        await api.POST('/v1/orgs/{orgId}/skills', {
          params: { path: { orgId: scope.org.id } },
          body,
        }),
      )
    : unwrap(await api.POST('/v1/skills', { body }));
}

export async function importSkill(
  scope: SkillScope,
  body: Schemas['ImportSkillDto'],
): Promise<Skill> {
  return scope.org
    ? unwrap(
        await api.POST('/v1/orgs/{orgId}/skills/import', {
          params: { path: { orgId: scope.org.id } },
          body,
        }),
      )
    : unwrap(await api.POST('/v1/skills/import', { body }));
}

export async function publishVersion(
  scope: SkillScope,
  id: string,
  body: PublishBody,
): Promise<SkillVersion> {
  return scope.org
    ? unwrap(
        await api.POST('/v1/orgs/{orgId}/skills/{id}/versions', {
          params: { path: { orgId: scope.org.id, id } },
          body,
        }),
      )
    : unwrap(
        await api.POST('/v1/skills/{id}/versions', {
          params: { path: { id } },
          body,
        }),
      );
}

export async function setSkillTools(
  scope: SkillScope,
  id: string,
  allowedTools: string[],
): Promise<Skill> {
  const body = { allowed_tools: allowedTools };
  return scope.org
    ? unwrap(
        await api.PUT('/v1/orgs/{orgId}/skills/{id}/tools', {
          params: { path: { orgId: scope.org.id, id } },
          body,
        }),
      )
    : unwrap(
        await api.PUT('/v1/skills/{id}/tools', {
          params: { path: { id } },
          body,
        }),
      );
}

/** The raw answer of a run (server-sent events when it started; see eventsOrRefusal). */
export function runSkill(
  scope: SkillScope,
  id: string,
  body: SkillRun,
  options: {
    parseAs: 'stream';
    headers: Record<string, string>;
    signal: AbortSignal;
  },
) {
  return scope.org
    ? api.POST('/v1/orgs/{orgId}/skills/{id}/run', {
        ...options,
        params: { path: { orgId: scope.org.id, id } },
        body,
      })
    : api.POST('/v1/skills/{id}/run', {
        ...options,
        params: { path: { id } },
        body,
      });
}

export function exportHref(scope: SkillScope, id: string): string {
  const skill = encodeURIComponent(id);
  return scope.org
    ? `/v1/orgs/${encodeURIComponent(scope.org.id)}/skills/${skill}/export`
    : `/v1/skills/${skill}/export`;
}
