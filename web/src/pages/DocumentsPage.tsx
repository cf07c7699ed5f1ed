import { useRef, useState } from 'preact/hooks';
import { collections as collectionsApi, documents } from '../api/endpoints';
import { ApiError as ApiErrorClass } from '../api/http';
import type { Collection, DocumentRecord } from '../api/types';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorText } from '../components/ErrorText';
import { PageHeading } from '../components/PageHeading';
import { PageNav } from '../components/Pager';
import { Time } from '../components/Time';
import { DocumentDialog } from '../components/PassageDialog';
import { formatBytes, formatCount, formatNumber } from '../lib/format';
import { useRoleAtLeast } from '../state';
import { useResource } from '../lib/use-resource';
import { useAction } from '../lib/use-action';
import { useCollections } from '../lib/collections';
import { Dialog } from '../components/Dialog';

const PAGE_SIZE = 20;
const ACCEPT = '.txt,.md,.markdown,.html,.htm,.pdf,text/plain,text/markdown,text/html,application/pdf';

export function DocumentsPage() {
  const [offset, setOffset] = useState(0);
  const all = useCollections();
  const [collectionId, setCollectionId] = useState('default');
  const list = useResource(() => documents.list(PAGE_SIZE, offset, collectionId), [offset, collectionId]);
  const collection =
    all.data?.find((candidate) => candidate.id === collectionId) ??
    (collectionId === 'default' ? all.data?.[0] : undefined);
  const [naming, setNaming] = useState<Collection | 'new' | null>(null);
  const [removing, setRemoving] = useState<Collection | null>(null);
  const [deleting, setDeleting] = useState<DocumentRecord | null>(null);
  const [opened, setOpened] = useState<DocumentRecord | null>(null);
  const [status, setStatus] = useState('');
  const page = list.data;
  // A viewer reads the documents; uploading and deleting take a member.
  const canWrite = useRoleAtLeast('member');

  return (
    <>
      <PageHeading title="Documents" />
      <p class="lede">
        Your organization's private knowledge base, in collections. Ask them by choosing <em>Private knowledge base</em>{' '}
        on the Ask page.
      </p>
      <section aria-labelledby="collection-heading" class="card">
        <h2 id="collection-heading">Collections</h2>
        <div class="field-row collection-bar">
          <div class="field">
            <label for="collection">Collection</label>
            <select
              id="collection"
              value={collection?.id ?? collectionId}
              aria-busy={all.loading}
              onChange={(event) => {
                setCollectionId(event.currentTarget.value);
                setOffset(0);
                setStatus('');
              }}
            >
              {(all.data ?? []).map((candidate) => (
                <option key={candidate.id} value={candidate.id}>
                  {candidate.name} ({formatCount(candidate.document_count, 'document')})
                </option>
              ))}
            </select>
          </div>
          {canWrite && (
            <div class="buttons collection-actions">
              <button type="button" onClick={() => setNaming('new')}>
                New collection
              </button>
              {collection && collection.id !== all.data?.[0]?.id && (
                <>
                  <button type="button" onClick={() => setNaming(collection)}>
                    Rename<span class="visually-hidden"> {collection.name}</span>
                  </button>
                  <button type="button" class="danger-outline" onClick={() => setRemoving(collection)}>
                    Delete collection<span class="visually-hidden"> {collection.name}</span>
                  </button>
                </>
              )}
            </div>
          )}
        </div>
        <ErrorText error={all.error} />
      </section>
      {canWrite && (
        <UploadForm
          collectionId={collection?.id ?? collectionId}
          collectionName={collection?.name ?? 'default'}
          onStart={() => setStatus('')}
          onUploaded={(document) => {
            setStatus(`“${document.title}” was added (${formatCount(document.chunk_count, 'chunk')}).`);
            setOffset(0);
            void list.reload();
            void all.reload();
          }}
        />
      )}
      <section aria-labelledby="documents-heading">
        <div class="section-header">
          <h2 id="documents-heading">
            Documents in {collection?.name ?? 'default'}
            {page ? ` (${formatNumber(page.count)})` : ''}
          </h2>
        </div>
        <p class="hint" role="status">
          {status}
        </p>
        <ErrorText error={list.error} />
        {page?.results.length === 0 && <p>{canWrite ? 'No documents yet. Upload one above.' : 'No documents yet.'}</p>}
        {page && page.results.length > 0 && (
          <table class="responsive-table">
            <caption class="visually-hidden">Private documents, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Title</th>
                <th scope="col">Type</th>
                <th scope="col">Size</th>
                <th scope="col">Chunks</th>
                <th scope="col">Added</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {page.results.map((document) => (
                <tr key={document.id} data-document-id={document.id}>
                  <th scope="row" data-label="Title">
                    <button type="button" class="link document-open" onClick={() => setOpened(document)}>
                      {document.title}
                    </button>
                  </th>
                  <td data-label="Type">{document.content_type}</td>
                  <td data-label="Size">{formatBytes(document.size_bytes)}</td>
                  <td data-label="Chunks">{formatNumber(document.chunk_count)}</td>
                  <td data-label="Added">
                    <Time iso={document.created_at} />
                  </td>
                  <td class="actions">
                    {canWrite && (
                      <button
                        type="button"
                        class="danger-outline"
                        onClick={() => {
                          setStatus('');
                          setDeleting(document);
                        }}
                      >
                        Delete<span class="visually-hidden"> {document.title}</span>
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <PageNav label="Document pages" offset={offset} pageSize={PAGE_SIZE} page={page} onOffset={setOffset} />
      </section>
      {opened && (
        <DocumentDialog documentId={opened.id} title={opened.title} domain={null} onDismiss={() => setOpened(null)} />
      )}
      {deleting && (
        <ConfirmDialog
          title={`Delete “${deleting.title}”?`}
          confirmLabel="Delete document"
          danger
          onCancel={() => setDeleting(null)}
          onConfirm={async () => {
            await documents.remove(deleting.id);
            await list.reload();
            void all.reload();
            setDeleting(null);
            setStatus(`“${deleting.title}” was deleted.`);
          }}
        >
          <p>It is removed from the private knowledge base and no longer cited in answers.</p>
        </ConfirmDialog>
      )}
      {naming && (
        <CollectionNameDialog
          collection={naming === 'new' ? null : naming}
          onDismiss={() => setNaming(null)}
          onSaved={async (saved) => {
            await all.reload();
            setCollectionId(saved.id);
            setOffset(0);
            setStatus(naming === 'new' ? `The collection “${saved.name}” was created.` : `Renamed to “${saved.name}”.`);
            setNaming(null);
          }}
        />
      )}
      {removing && (
        <ConfirmDialog
          title={`Delete the collection “${removing.name}”?`}
          confirmLabel="Delete collection"
          danger
          onCancel={() => setRemoving(null)}
          onConfirm={async () => {
            await collectionsApi.remove(removing.id);
            await all.reload();
            setCollectionId('default');
            setOffset(0);
            setStatus(`The collection “${removing.name}” was deleted.`);
            setRemoving(null);
          }}
        >
          <p>
            Its {formatCount(removing.document_count, 'document')} and their passages are deleted with it, and API keys
            limited to it can no longer reach it.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}

function CollectionNameDialog({
  collection,
  onDismiss,
  onSaved,
}: {
  /** null: a new collection. */
  collection: Collection | null;
  onDismiss: () => void;
  onSaved: (saved: Collection) => Promise<void>;
}) {
  const [name, setName] = useState(collection?.name ?? '');
  const { busy, error, run } = useAction();
  return (
    <Dialog title={collection ? `Rename “${collection.name}”` : 'New collection'} onDismiss={onDismiss}>
      <form
        class="stack"
        onSubmit={(event) => {
          event.preventDefault();
          void run(async () => {
            const saved = collection
              ? await collectionsApi.rename(collection.id, name.trim())
              : await collectionsApi.create(name.trim());
            await onSaved(saved);
          });
        }}
      >
        <div class="field">
          <label for="collection-name">Name</label>
          <input
            id="collection-name"
            value={name}
            required
            maxLength={100}
            onInput={(event) => setName(event.currentTarget.value)}
            aria-describedby={error ? 'collection-name-error' : undefined}
            aria-invalid={error ? true : undefined}
            data-autofocus
          />
        </div>
        <ErrorText error={error} id="collection-name-error" />
        <div class="buttons">
          <button type="submit" class="primary" disabled={busy || !name.trim()}>
            {collection ? 'Rename' : 'Create collection'}
          </button>
          <button type="button" onClick={onDismiss}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function UploadForm({
  collectionId,
  collectionName,
  onStart,
  onUploaded,
}: {
  collectionId: string;
  collectionName: string;
  onStart: () => void;
  onUploaded: (document: DocumentRecord) => void;
}) {
  const input = useRef<HTMLInputElement>(null);
  const [file, setFile] = useState<File | null>(null);
  const [title, setTitle] = useState('');
  const [dragging, setDragging] = useState(false);
  const { busy, error, setError, run } = useAction();

  function choose(chosen: File | null) {
    setFile(chosen);
    setError(null);
  }

  async function submit(event: Event) {
    event.preventDefault();
    onStart();
    if (!file) {
      setError(new ApiErrorClass(0, 'Choose a file to upload, or drop one on the box.'));
      return;
    }
    await run(async () => {
      const created = await documents.upload(file, title, collectionId);
      setFile(null);
      setTitle('');
      if (input.current) input.current.value = '';
      onUploaded(created);
    });
  }

  return (
    <section aria-labelledby="upload-heading" class="card">
      <h2 id="upload-heading">Upload a document</h2>
      <p class="hint">Into the collection “{collectionName}”.</p>
      <form onSubmit={submit} class="stack">
        <div
          class={dragging ? 'dropzone dragging' : 'dropzone'}
          data-testid="dropzone"
          onDragOver={(event) => {
            event.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={(event) => {
            event.preventDefault();
            setDragging(false);
            choose(event.dataTransfer?.files[0] ?? null);
          }}
        >
          <input
            ref={input}
            id="document-file"
            class="file-input"
            type="file"
            accept={ACCEPT}
            onChange={(event) => choose(event.currentTarget.files?.[0] ?? null)}
            aria-describedby="document-file-hint"
          />
          <label for="document-file">
            <strong>Drop a file here</strong> or <span class="linklike">choose one</span>
          </label>
          <p class="hint" id="document-file-hint">
            Text, Markdown, HTML or PDF.
          </p>
          {file && (
            <p class="selected-file" aria-live="polite">
              Selected: <strong>{file.name}</strong> ({formatBytes(file.size)})
            </p>
          )}
        </div>
        <div class="field">
          <label for="document-title">Title (optional)</label>
          <input
            id="document-title"
            value={title}
            maxLength={300}
            placeholder={file?.name ?? 'Defaults to the file name'}
            onInput={(event) => setTitle(event.currentTarget.value)}
          />
        </div>
        <ErrorText error={error} id="upload-error" />
        <div>
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Uploading…' : 'Upload'}
          </button>
        </div>
      </form>
    </section>
  );
}
