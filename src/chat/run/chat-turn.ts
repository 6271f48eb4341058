import { ChatMessage } from '../../models/providers/model-provider';
import { FileContext } from '../../files/context/file-context.service';
import { ToolBinding } from '../../tools/run/tool-binding';
import { SessionUser } from '../../auth/session-user';
import { ModelPrice } from '../pricing';

/** One chat turn or Skill run, as the pipeline receives it from POST /v1/chat or POST /v1/skills/:id/run. */
export interface ChatTurn {
  model: string;
  idempotencyKey: string;
  /** What the key stands for: the same key with another fingerprint is refused (422). */
  fingerprint: string;
  conversationId?: string;
  /** The new messages, stored in the conversation and sent after its history. */
  messages: ChatMessage[];
  /**
   * Regenerate and edit: the history ends at `parentId` (null: no history) instead of the conversation's
   * current message, and the new messages are stored after it, as a new branch.
   */
  anchor?: { parentId: string | null };
  /** Sent first and not stored: a Skill's instruction. */
  system?: string;
  skill?: { skillId: string; skillVersionId: string };
  /** The caller's files whose text the model receives (a context section before the history). */
  fileIds?: string[];
  /** Ids of the tools the model may call (docs/adr/0061-tools.md); none: a run without tools. */
  tools?: string[];
  /**
   * The organization whose pool pays (docs/adr/0062-organizations.md): its plan decides the models, the
   * claim checks the caller is still a member. Absent: the caller pays.
   */
  payer?: OrgPayer;
  /**
   * Checks that apply only to a request not made before (a Skill's input against its input_schema), and
   * what such a request still needs to know (regenerate, edit: the branch point, its model and Skill): run
   * after the key lookup, so a retry is replayed even if the check would now fail or the conversation has
   * moved on, and before anything is claimed or billed. What it answers completes the turn.
   */
  prepareNewRequest?: () => Promise<TurnCompletion | void>;
}

/** An organization paying for a run, as its membership check read it. */
export interface OrgPayer {
  organizationId: string;
  planCode: string;
}

/**
 * The caller as the paying plan sees them: for a run an organization's pool pays, with the organization's
 * plan (its models and tools). docs/adr/0062-organizations.md
 */
export function payingCaller(
  user: SessionUser,
  payer: Pick<OrgPayer, 'planCode'> | undefined,
): SessionUser {
  return payer ? { ...user, planCode: payer.planCode } : user;
}

/** What `prepareNewRequest` may complete of a turn. */
export type TurnCompletion = Partial<
  Pick<
    ChatTurn,
    'model' | 'system' | 'skill' | 'anchor' | 'fileIds' | 'tools' | 'payer'
  >
>;

/** A catalog model as a run calls and bills it: its price, its provider's name for it, its endpoint. */
export type RunModel = ModelPrice & {
  id: string;
  upstreamModel: string;
  endpoint: string;
};

/** Everything decided before the claim: which model, what it costs at most, what the model receives. */
export interface RunPlan {
  runId: string;
  /** The model asked for (its endpoint is configured here: checked before the claim). */
  model: RunModel;
  /**
   * Tried in order when `model` fails before its first token: its catalog fallbacks that the paying plan
   * allows. docs/adr/0063-providers-and-routing.md
   */
  fallbacks: RunModel[];
  /** The model that answered (set by the router at its first token): the run is billed at it. */
  answered?: RunModel;
  conversationId: string;
  newConversation: boolean;
  prompt: ChatMessage[];
  /** How many leading messages of `prompt` are a stable prefix a provider may cache (0: none). */
  cacheablePrefix: number;
  /** The tools offered to the model; undefined for a run without tools. */
  tools?: ToolBinding;
  /** The attached files that went into the prompt. */
  files: FileContext['files'];
  estimatedInputTokens: number;
  reservedCredits: number;
  usageDay: Date;
  /** The organization whose pool pays; absent: the user. */
  organizationId?: string;
  /** The paying plan: the organization's, or the user's. */
  planCode: string;
}

/** The model a run is billed at: the one that answered, else the one asked for. */
export function billedModel(
  plan: Pick<RunPlan, 'model' | 'answered'>,
): RunModel {
  return plan.answered ?? plan.model;
}
