import { useEffect, useState, type ReactNode } from 'react';
import { ApiFailure, describeFailure } from '../api/client';
import {
  forkShared,
  readShared,
  type SharedConversation,
  type SharedMessage,
} from '../api/shares';
import { PlainText } from '../markdown/PlainText';
import { navigate } from '../navigation';
import { forgetReturnPath, rememberReturnPath } from '../return-path';
import { RouteLink } from './AuthScreens';
import { AnswerText } from './chat/AnswerText';
import { Notice } from './Notice';
import { STATUS_WORDS } from './ToolCalls';
import './chat.css';
import './share.css';

const ROLE_NAMES: Record<SharedMessage['role'], string> = {
  user: 'User',
  assistant: 'Assistant',
  system: 'System',
};

/** Asks search engines not to index the page while it is shown (the API's answer says so too). */
function useNoIndex() {
  useEffect(() => {
    const meta = document.createElement('meta');
    meta.name = 'robots';
    meta.content = 'noindex';
    document.head.appendChild(meta);
    return () => meta.remove();
  }, []);
}

/**
 * /shared/{shareId}: a conversation someone shared by link, read-only, signed in or not (GET
 * /v1/shared/{shareId} needs no session). Continue this conversation copies it into a new conversation of
 * the person's own (signed out: after signing in or up, which comes back here first).
 */
export function SharedConversationScreen({
  shareId,
  signedIn,
}: {
  shareId: string;
  signedIn: boolean;
}) {
  const [shared, setShared] = useState<SharedConversation | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [forking, setForking] = useState(false);
  const [forkError, setForkError] = useState<unknown>(null);
  useNoIndex();

  // Back here after signing in to continue it: the detour is over.
  useEffect(() => {
    if (signedIn) forgetReturnPath();
  }, [signedIn]);

  useEffect(() => {
    let current = true;
    readShared(shareId)
      .then((conversation) => {
        if (current) setShared(conversation);
      })
      .catch((failure: unknown) => {
        if (current) setError(failure);
      });
    return () => {
      current = false;
    };
  }, [shareId]);

  const continueIt = async () => {
    if (!signedIn) {
      rememberReturnPath(window.location.pathname);
      navigate('/sign-in');
      return;
    }
    setForking(true);
    setForkError(null);
    try {
      navigate(`/conversations/${await forkShared(shareId)}`);
    } catch (failure) {
      setForkError(failure);
      setForking(false);
    }
  };

  const gone = error instanceof ApiFailure && error.status === 404;
  const content = (
    <section className="shared" aria-labelledby="shared-title">
      <p className="shared-kicker">Shared conversation · read-only</p>
      <h1 id="shared-title" className="chat-title">
        {shared?.title ?? 'Shared conversation'}
      </h1>
      {gone ? (
        <>
          <Notice kind="error">
            This link was removed or never existed. Ask the person who shared it
            for a new link.
          </Notice>
          <p>
            {signedIn ? (
              <RouteLink to="/">Go to your chat</RouteLink>
            ) : (
              <RouteLink to="/sign-in">Sign in</RouteLink>
            )}
          </p>
        </>
      ) : error ? (
        <Notice kind="error">{describeFailure(error)}</Notice>
      ) : !shared ? (
        <p role="status">Loading the conversation…</p>
      ) : (
        <>
          <p className="meta">
            Shared on{' '}
            <time dateTime={shared.createdAt}>
              {new Date(shared.createdAt).toLocaleString()}
            </time>{' '}
            · {shared.messages.length}{' '}
            {shared.messages.length === 1 ? 'message' : 'messages'}
          </p>
          <ol className="turns" aria-label="Messages">
            {shared.messages.map((message, index) => (
              <SharedTurn key={index} message={message} />
            ))}
          </ol>
          <div className="shared-continue">
            <button
              type="button"
              onClick={() => void continueIt()}
              disabled={forking}
              aria-describedby="shared-continue-about"
            >
              {forking ? 'Copying…' : 'Continue this conversation'}
            </button>
            <p id="shared-continue-about" className="meta">
              {signedIn
                ? 'Copies it into a new conversation of your own; the shared link does not change.'
                : 'Sign in, or create an account, first: you come back here, then it is copied into a conversation of your own.'}
            </p>
          </div>
          {forkError ? (
            <Notice kind="error">{describeFailure(forkError)}</Notice>
          ) : null}
        </>
      )}
    </section>
  );
  return signedIn ? content : <SignedOutFrame>{content}</SignedOutFrame>;
}

function SharedTurn({ message }: { message: SharedMessage }) {
  return (
    <li className={`turn turn-${message.role}`}>
      <span className="role">{ROLE_NAMES[message.role]}</span>
      {message.toolCalls.length ? (
        <ul className="tool-calls" aria-label="Tool calls">
          {message.toolCalls.map((call, index) => (
            <li key={index}>
              Tool <code>{call.tool}</code>:{' '}
              {STATUS_WORDS[call.status] ?? call.status}
            </li>
          ))}
        </ul>
      ) : null}
      {message.role === 'assistant' ? (
        <AnswerText text={message.content} streaming={false} />
      ) : (
        <PlainText text={message.content} />
      )}
      {message.files.length ? (
        <p className="meta attached-files">
          Attached: {message.files.map((file) => file.name).join(', ')}
        </p>
      ) : null}
      {message.model ? (
        <p className="meta shared-model">Answered by {message.model}</p>
      ) : null}
    </li>
  );
}

/** A signed-out visitor has no app shell: a bar to sign in or up, and the page's main landmark. */
function SignedOutFrame({ children }: { children: ReactNode }) {
  return (
    <div className="shell">
      <header className="topbar">
        <RouteLink to="/">Chat</RouteLink>
        <nav aria-label="Account" className="sections">
          <RouteLink to="/sign-in">Sign in</RouteLink>
          <RouteLink to="/sign-up">Sign up</RouteLink>
        </nav>
      </header>
      <main id="content">{children}</main>
    </div>
  );
}
