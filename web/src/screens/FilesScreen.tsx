import {
  useCallback,
  useEffect,
  useRef,
  useState,
  type FormEvent,
} from 'react';
import {
  api,
  ApiFailure,
  describeFailure,
  unwrap,
  type Schemas,
} from '../api/client';
import { fetchWithUploadProgress, type UploadProgress } from '../api/upload';
import { Notice } from './Notice';
import './files.css';

type StoredFile = Schemas['FileDto'];

const PAGE_SIZE = 50;
const POLL_MS = 2000;

/** Why a file has no text, in words (FileTextDto.error). */
const TEXT_FAILURES: Record<string, string> = {
  pdf_encrypted: 'the PDF is encrypted',
  pdf_no_text: 'the PDF has no text layer (scanned pages?)',
  file_unreadable: 'the file could not be read',
  extraction_timeout: 'reading it took too long',
  extraction_too_large: 'it has too much text',
  extraction_failed: 'the text could not be extracted',
};

/** The caller's files: upload with progress, text extraction status (polled while pending), download, delete. */
export function FilesScreen() {
  // The first page is re-read while text is pending; pages loaded with "Show more" are kept beside it.
  const [firstPage, setFirstPage] = useState<StoredFile[] | null>(null);
  const [more, setMore] = useState<StoredFile[]>([]);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [listError, setListError] = useState<unknown>(null);
  const [chosen, setChosen] = useState<File | null>(null);
  const [progress, setProgress] = useState<UploadProgress | null>(null);
  const [uploadError, setUploadError] = useState<unknown>(null);
  const [uploaded, setUploaded] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const fileInput = useRef<HTMLInputElement>(null);
  const alive = useRef(true);
  const pagedOn = useRef(false);
  const uploadAbort = useRef<AbortController | null>(null);

  const refresh = useCallback(
    () =>
      api
        .GET('/v1/files', { params: { query: { limit: PAGE_SIZE } } })
        .then((result) => {
          const page = unwrap(result);
          if (!alive.current) return;
          setFirstPage(page.data);
          // Once more pages are shown, the cursor is theirs.
          if (!pagedOn.current) setNextCursor(page.nextCursor);
          setListError(null);
        })
        .catch((failure: unknown) => {
          if (alive.current) setListError(failure);
        }),
    [],
  );

  useEffect(() => {
    alive.current = true;
    void refresh();
    // An upload under way goes on when the person leaves: the file is listed when they come back.
    return () => {
      alive.current = false;
    };
  }, [refresh]);

  const files = [
    ...(firstPage ?? []),
    ...more.filter((file) => !firstPage?.some((first) => first.id === file.id)),
  ];
  const anyPending = files.some((file) => file.text.status === 'pending');

  // Re-read the list every 2 s while any file's text is being extracted; stops when none is, or on unmount.
  useEffect(() => {
    if (!anyPending) return;
    const timer = window.setInterval(() => void refresh(), POLL_MS);
    return () => window.clearInterval(timer);
  }, [anyPending, refresh]);

  const upload = async (event: FormEvent) => {
    event.preventDefault();
    if (!chosen || progress) return;
    const abort = new AbortController();
    uploadAbort.current = abort;
    setUploadError(null);
    setUploaded(null);
    setProgress({ loaded: 0, total: chosen.size });
    const form = new FormData();
    form.append('file', chosen, chosen.name);
    try {
      const file = unwrap(
        await api.POST('/v1/files', {
          // openapi-fetch types the multipart body as its fields; the FormData carries them as they are.
          body: form as unknown as { file: string },
          bodySerializer: (body) => body as unknown as FormData,
          fetch: fetchWithUploadProgress(
            (step) => alive.current && setProgress(step),
          ),
          signal: abort.signal,
        }),
      );
      if (!alive.current) return;
      setUploaded(file.name);
      setChosen(null);
      if (fileInput.current) fileInput.current.value = '';
      setFirstPage((current) => [
        file,
        ...(current ?? []).filter((other) => other.id !== file.id),
      ]);
      void refresh();
    } catch (failure) {
      if (alive.current && !abort.signal.aborted) setUploadError(failure);
    } finally {
      uploadAbort.current = null;
      if (alive.current) setProgress(null);
    }
  };

  const showMore = async () => {
    if (!nextCursor) return;
    setLoadingMore(true);
    setActionError(null);
    try {
      const page = unwrap(
        await api.GET('/v1/files', {
          params: { query: { limit: PAGE_SIZE, cursor: nextCursor } },
        }),
      );
      pagedOn.current = true;
      setMore((loaded) => [...loaded, ...page.data]);
      setNextCursor(page.nextCursor);
    } catch (failure) {
      setActionError(failure);
    } finally {
      setLoadingMore(false);
    }
  };

  const remove = async (file: StoredFile) => {
    setDeleting(file.id);
    setActionError(null);
    try {
      unwrap(
        await api.DELETE('/v1/files/{id}', {
          params: { path: { id: file.id } },
        }),
      );
      setFirstPage((current) =>
        (current ?? []).filter((other) => other.id !== file.id),
      );
      setMore((loaded) => loaded.filter((other) => other.id !== file.id));
      setConfirming(null);
      setUploaded(null);
    } catch (failure) {
      setActionError(failure);
    } finally {
      setDeleting(null);
    }
  };

  const percent =
    progress && progress.total
      ? Math.round((progress.loaded / progress.total) * 100)
      : null;

  return (
    <section className="files" aria-labelledby="files-heading">
      <h1 id="files-heading">Files</h1>

      <form className="files-upload" onSubmit={(event) => void upload(event)}>
        <label>
          Upload a file
          <input
            ref={fileInput}
            type="file"
            name="file"
            accept=".txt,.md,.markdown,.pdf,.docx,text/plain,text/markdown,application/pdf,application/vnd.openxmlformats-officedocument.wordprocessingml.document"
            aria-describedby="files-upload-help"
            onChange={(event) => (
              setChosen(event.target.files?.[0] ?? null),
              setUploadError(null),
              setUploaded(null)
            )}
            disabled={progress !== null}
          />
        </label>
        <p id="files-upload-help" className="meta">
          PDF, Word (.docx), plain text or Markdown. The text is extracted after
          the upload, for use in chats and Skills.
        </p>
        <div className="files-upload-actions">
          <button type="submit" disabled={!chosen || progress !== null}>
            {progress ? 'Uploading…' : 'Upload'}
          </button>
          {progress ? (
            <>
              <progress
                aria-label="Upload progress"
                max={progress.total ?? undefined}
                value={progress.total ? progress.loaded : undefined}
              />
              <span className="meta" aria-live="polite">
                {percent === null ? 'Uploading…' : `${percent}%`}
              </span>
              <button
                type="button"
                className="secondary"
                onClick={() => uploadAbort.current?.abort()}
              >
                Cancel upload
              </button>
            </>
          ) : null}
        </div>
        {uploadError ? (
          <Notice kind="error">{uploadFailure(uploadError)}</Notice>
        ) : null}
        {uploaded ? <Notice kind="info">Uploaded {uploaded}.</Notice> : null}
      </form>

      <h2>Your files</h2>
      {listError ? (
        <Notice kind="error">{describeFailure(listError)}</Notice>
      ) : null}
      {actionError ? (
        <Notice kind="error">{describeFailure(actionError)}</Notice>
      ) : null}
      {firstPage === null && !listError ? (
        <p role="status">Loading…</p>
      ) : files.length === 0 && !listError ? (
        <p>No files yet.</p>
      ) : (
        <ul className="file-list" aria-label="Files">
          {files.map((file) => (
            <li key={file.id} className="file-item">
              <div className="file-main">
                <span className="file-name">{file.name}</span>
                <span className="meta">
                  {file.kind} · {formatSize(file.sizeBytes)} ·{' '}
                  <time dateTime={file.createdAt}>
                    {new Date(file.createdAt).toLocaleString()}
                  </time>
                </span>
                <TextStatus file={file} />
              </div>
              <div className="file-actions">
                <a
                  href={`/v1/files/${encodeURIComponent(file.id)}/content`}
                  download={file.name}
                  aria-label={`Download ${file.name}`}
                >
                  Download
                </a>
                {confirming === file.id ? (
                  <span
                    className="file-confirm"
                    role="group"
                    aria-label={`Confirm deleting ${file.name}`}
                  >
                    <span>Delete {file.name}?</span>
                    <button
                      type="button"
                      className="danger"
                      onClick={() => void remove(file)}
                      disabled={deleting === file.id}
                    >
                      {deleting === file.id ? 'Deleting…' : 'Yes, delete'}
                    </button>
                    <button
                      type="button"
                      className="secondary"
                      onClick={() => setConfirming(null)}
                      disabled={deleting === file.id}
                    >
                      Cancel
                    </button>
                  </span>
                ) : (
                  <button
                    type="button"
                    className="secondary"
                    aria-label={`Delete ${file.name}`}
                    onClick={() => setConfirming(file.id)}
                  >
                    Delete
                  </button>
                )}
              </div>
            </li>
          ))}
        </ul>
      )}
      {nextCursor && more.length + (firstPage?.length ?? 0) > 0 ? (
        <button
          type="button"
          className="secondary"
          onClick={() => void showMore()}
          disabled={loadingMore}
        >
          {loadingMore ? 'Loading…' : 'Show more'}
        </button>
      ) : null}
    </section>
  );
}

function TextStatus({ file }: { file: StoredFile }) {
  const { status, chars, pages, error } = file.text;
  if (status === 'pending') {
    return (
      <span className="file-status file-status-pending">
        Text: pending (extracting…)
      </span>
    );
  }
  if (status === 'failed') {
    return (
      <span className="file-status file-status-failed">
        Text: failed,{' '}
        {TEXT_FAILURES[error ?? ''] ?? 'the text could not be extracted'}
      </span>
    );
  }
  const details = [
    chars !== null ? `${chars.toLocaleString()} characters` : null,
    pages !== null ? `${pages} ${pages === 1 ? 'page' : 'pages'}` : null,
  ].filter(Boolean);
  return (
    <span className="file-status file-status-ready">
      Text: ready{details.length ? ` (${details.join(', ')})` : ''}
    </span>
  );
}

/** The service's own words (the storage quota, 413, says to delete files or upgrade; a rate limit when to retry). */
function uploadFailure(error: unknown): string {
  const line = describeFailure(error);
  if (error instanceof ApiFailure && error.code === 'payload_too_large')
    return `${line} Choose a smaller file.`;
  return line;
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 * 1024 * 1024)
    return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  return `${(bytes / (1024 * 1024 * 1024)).toFixed(1)} GB`;
}
