import {
  useCallback,
  useEffect,
  useId,
  useState,
  type FormEvent,
  type KeyboardEvent,
} from 'react';
import { api, unwrap, type Schemas } from '../../api/client';
import { RouteLink } from '../AuthScreens';
import { ToolPicker, type ToolInfo } from '../ToolCalls';

type FileItem = Schemas['FileDto'];

/** What the person sends: the text, the files attached to it. */
export interface Outgoing {
  content: string;
  files: { id: string; name: string }[];
}

const MAX_FILES = 10;

/**
 * Where a message is written: Enter sends it, Shift+Enter starts a new line (and an Enter that ends an input
 * method's composition does neither); while an answer runs, Send is Stop. Files with their text ready can be
 * attached, and the tools the model may call are chosen here. The draft and the files come back when the
 * message could not be sent (`onSend` answers false).
 */
export function Composer({
  busy,
  canSend,
  onSend,
  onStop,
  onError,
  toolIds,
  onToolsChange,
}: {
  /** An answer runs: Stop instead of Send. */
  busy: boolean;
  /** A model is chosen. */
  canSend: boolean;
  onSend: (message: Outgoing) => Promise<boolean>;
  onStop: () => void;
  /** A failure reading the files or the tools. */
  onError: (failure: unknown) => void;
  toolIds: string[];
  onToolsChange: (ids: string[]) => void;
}) {
  const [draft, setDraft] = useState('');
  const [files, setFiles] = useState<FileItem[] | null>(null);
  const [attached, setAttached] = useState<string[]>([]);
  const [tools, setTools] = useState<ToolInfo[] | null>(null);
  const hint = useId();

  useEffect(() => {
    void api
      .GET('/v1/tools')
      .then((result) => setTools(unwrap(result).data))
      .catch(onError);
  }, [onError]);

  const loadFiles = useCallback(
    () =>
      api
        .GET('/v1/files', { params: { query: { limit: 100 } } })
        .then((result) => setFiles(unwrap(result).data))
        .catch(onError),
    [onError],
  );
  useEffect(() => void loadFiles(), [loadFiles]);
  const readyFiles = (files ?? []).filter(
    (file) => file.text.status === 'ready',
  );

  const send = async (event: FormEvent) => {
    event.preventDefault();
    // As written: only blank lines before and whitespace after go (an indented first line stays).
    const content = draft.replace(/^\s*\n/, '').trimEnd();
    if (!content || busy || !canSend) return;
    const fileIds = attached;
    setDraft('');
    setAttached([]);
    const sent = await onSend({
      content,
      files: readyFiles
        .filter((file) => fileIds.includes(file.id))
        .map((file) => ({ id: file.id, name: file.name })),
    });
    if (!sent) {
      setDraft((current) => current || content);
      setAttached((current) => (current.length ? current : fileIds));
    }
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    // isComposing (and key code 229, Safari's): the Enter that picks an input method's candidate.
    if (
      event.key !== 'Enter' ||
      event.shiftKey ||
      event.nativeEvent.isComposing ||
      event.keyCode === 229
    )
      return;
    event.preventDefault();
    if (!busy && canSend && draft.trim())
      event.currentTarget.form?.requestSubmit();
  };

  return (
    <form className="composer" onSubmit={(event) => void send(event)}>
      <label className="visually-hidden" htmlFor="message">
        Message
      </label>
      <textarea
        id="message"
        name="message"
        rows={3}
        value={draft}
        onChange={(event) => setDraft(event.target.value)}
        onKeyDown={onKeyDown}
        placeholder="Write a message"
        aria-describedby={hint}
        required
      />
      {busy ? (
        <button type="button" onClick={onStop}>
          Stop
        </button>
      ) : (
        <button type="submit" disabled={!canSend}>
          Send
        </button>
      )}
      <p id={hint} className="meta composer-hint">
        Enter sends, Shift+Enter starts a new line.
      </p>
      <details
        className="attach"
        onToggle={(event) =>
          event.currentTarget.open ? void loadFiles() : undefined
        }
      >
        <summary>
          Attach files
          {attached.length ? ` (${attached.length} selected)` : ''}
        </summary>
        <fieldset>
          <legend className="visually-hidden">Attach files</legend>
          {files === null ? (
            <p className="meta">Loading your files…</p>
          ) : readyFiles.length === 0 ? (
            <p className="meta">
              No file with its text ready.{' '}
              <RouteLink to="/files">Upload one in Files</RouteLink>.
            </p>
          ) : (
            readyFiles.map((file) => (
              <label key={file.id} className="check">
                <input
                  type="checkbox"
                  checked={attached.includes(file.id)}
                  disabled={
                    busy ||
                    (!attached.includes(file.id) &&
                      attached.length >= MAX_FILES)
                  }
                  onChange={(event) =>
                    setAttached((current) =>
                      event.target.checked
                        ? [...current, file.id]
                        : current.filter((id) => id !== file.id),
                    )
                  }
                />
                {file.name}
              </label>
            ))
          )}
        </fieldset>
      </details>
      <ToolPicker
        available={tools}
        selected={toolIds}
        onChange={onToolsChange}
        disabled={busy}
      />
    </form>
  );
}
