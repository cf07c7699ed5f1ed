import { useEffect, useRef, useState } from 'preact/hooks';
import { chat } from '../api/endpoints';
import { type ApiError, asApiError } from '../api/http';
import type { ChatMessage, ChatSession, Collection, Domain } from '../api/types';
import { CollectionChecklist } from '../components/CollectionChecklist';
import { collectionNames, useCollections } from '../lib/collections';
import { ErrorText } from '../components/ErrorText';
import { PageHeading } from '../components/PageHeading';
import { Sources } from '../components/Sources';
import { Time } from '../components/Time';
import { knowledgeBaseName, useKnowledgeBases } from '../lib/knowledge-bases';
import { useRoleAtLeast } from '../state';
import { useResource } from '../lib/use-resource';
import { Link, navigate } from '../router';
import { reloadQuota } from '../state';
import { useAction } from '../lib/use-action';

const SESSIONS_PAGE = 20;

/** The first question of a new conversation, handed from the start form to the conversation view. */
const firstQuestions = new Map<string, string>();
/** The collections a private conversation asks, as last chosen in this tab (none: `default`). */
const sessionCollections = new Map<string, string[]>();

const COLLECTIONS_HINT = 'Ranked together as one knowledge base.';

export function AskPage({ sessionId }: { sessionId?: string }) {
  const bases = useKnowledgeBases();
  const allCollections = useCollections();
  const [sessions, setSessions] = useState<ChatSession[]>([]);
  const [total, setTotal] = useState(0);
  const [listError, setListError] = useState<ApiError | null>(null);

  async function loadSessions(count = Math.max(sessions.length, SESSIONS_PAGE)) {
    try {
      const page = await chat.list(count, 0);
      setSessions(page.results);
      setTotal(page.count);
      setListError(null);
    } catch (caught) {
      setListError(asApiError(caught));
    }
  }
  useEffect(() => {
    void loadSessions(SESSIONS_PAGE);
  }, []);

  const allDomains = bases.data?.all;
  return (
    <>
      <PageHeading title="Ask" />
      <div class="ask-layout">
        <aside class="sessions" aria-labelledby="sessions-heading">
          <h2 id="sessions-heading">Conversations</h2>
          <Link to="ask" class="button" aria-current={sessionId ? undefined : 'page'}>
            New conversation
          </Link>
          <ErrorText error={listError} />
          {sessions.length === 0 && !listError && <p class="hint">No conversations yet.</p>}
          <ul class="session-list">
            {sessions.map((item) => (
              <li key={item.id}>
                <Link to={`ask/${item.id}`} aria-current={item.id === sessionId ? 'page' : undefined}>
                  <span class="session-title">{item.title || 'Untitled conversation'}</span>
                  <span class="session-meta">
                    {knowledgeBaseName(item.domain, allDomains)} · <Time iso={item.updated_at} />
                  </span>
                </Link>
              </li>
            ))}
          </ul>
          {sessions.length < total && (
            <button type="button" onClick={() => loadSessions(sessions.length + SESSIONS_PAGE)}>
              Show more
            </button>
          )}
        </aside>
        <div class="conversation">
          {sessionId ? (
            <Conversation
              key={sessionId}
              sessionId={sessionId}
              domains={allDomains}
              collections={allCollections.data ?? []}
              onActivity={() => loadSessions()}
            />
          ) : (
            <NewConversation
              loading={bases.loading}
              domains={bases.data?.allowed ?? []}
              domainsError={bases.error}
              collections={allCollections.data}
              onStarted={(session) => {
                void loadSessions();
                navigate(`ask/${session.id}`);
              }}
            />
          )}
        </div>
      </div>
    </>
  );
}

interface NewConversationProps {
  loading: boolean;
  domains: Domain[];
  domainsError: ApiError | null;
  collections: Collection[] | undefined;
  onStarted: (session: ChatSession) => void;
}

function NewConversation({ loading, domains, domainsError, collections, onStarted }: NewConversationProps) {
  const [domain, setDomain] = useState('');
  const [question, setQuestion] = useState('');
  const { busy, error, run } = useAction();
  const chosen = domains.find((candidate) => candidate.slug === domain);
  const [picked, setPicked] = useState<string[] | null>(null);
  // Until one is picked, the default collection (listed first).
  const chosenCollections = picked ?? (collections?.[0] ? [collections[0].id] : []);
  // Whether the chosen collections have anything to answer from yet.
  const noDocuments =
    domain === '' &&
    chosenCollections.length > 0 &&
    collections
      ?.filter((collection) => chosenCollections.includes(collection.id))
      .every((collection) => collection.document_count === 0) === true;
  const onlyDefault = chosenCollections.length === 1 && chosenCollections[0] === collections?.[0]?.id;
  const noneChosen = domain === '' && collections !== undefined && chosenCollections.length === 0;
  const canUpload = useRoleAtLeast('member');

  async function submit(event: Event) {
    event.preventDefault();
    const content = question.trim();
    if (!content) return;
    await run(
      async () => {
        const session = await chat.create(content.length > 80 ? `${content.slice(0, 79)}…` : content, domain || null);
        firstQuestions.set(session.id, content);
        if (!domain && chosenCollections.length > 0) sessionCollections.set(session.id, chosenCollections);
        onStarted(session);
      },
      { leaving: true },
    );
  }

  return (
    <section aria-labelledby="new-heading" class="card">
      <h2 id="new-heading">New conversation</h2>
      <form onSubmit={submit} class="stack">
        <div class="field">
          <label for="knowledge-base">Knowledge base</label>
          <select
            id="knowledge-base"
            value={domain}
            onChange={(event) => setDomain(event.currentTarget.value)}
            aria-describedby="knowledge-base-hint"
            aria-busy={loading}
          >
            <option value="">Private knowledge base (your documents)</option>
            {domains.map((candidate) => (
              <option key={candidate.slug} value={candidate.slug}>
                {candidate.name}
                {candidate.region ? ` (${candidate.region})` : ''}
              </option>
            ))}
          </select>
          <p class="hint" id="knowledge-base-hint">
            {chosen?.description ||
              (chosen ? `The public domain “${chosen.name}”.` : 'Searches the documents your organization uploaded.')}
          </p>
          <ErrorText error={domainsError} />
        </div>
        {domain === '' && collections && collections.length > 1 && (
          <CollectionChecklist
            id="new"
            legend="Collections"
            hint={noneChosen ? 'Choose at least one collection.' : COLLECTIONS_HINT}
            all={collections}
            chosen={chosenCollections}
            onChange={setPicked}
          />
        )}
        {noDocuments && (
          <div class="empty-state" data-testid="no-documents">
            <p>
              <strong>
                {onlyDefault
                  ? 'Your private knowledge base has no documents yet.'
                  : 'The chosen collections have no documents yet.'}
              </strong>{' '}
              {canUpload ? 'Upload one to ask about it' : 'A member of your team can upload some'}
              {domains.length > 0 ? ', or choose a public knowledge base above' : ''}.
            </p>
            {canUpload && (
              <Link to="documents" class="button primary">
                Upload a document
              </Link>
            )}
          </div>
        )}
        <QuestionField
          value={question}
          onInput={setQuestion}
          onSubmit={submit}
          errorId={error ? 'new-error' : undefined}
        />
        <ErrorText error={error} id="new-error" />
        <div>
          <button type="submit" class="primary" disabled={busy || !question.trim() || noneChosen}>
            {busy ? 'Starting…' : 'Ask'}
          </button>
        </div>
      </form>
    </section>
  );
}

function QuestionField(props: {
  value: string;
  onInput: (value: string) => void;
  onSubmit: (event: Event) => void;
  errorId?: string;
}) {
  return (
    <div class="field">
      <label for="question">Question</label>
      <textarea
        id="question"
        rows={3}
        value={props.value}
        onInput={(event) => props.onInput(event.currentTarget.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
            event.preventDefault();
            props.onSubmit(event);
          }
        }}
        aria-describedby={['question-hint', props.errorId].filter(Boolean).join(' ')}
        aria-invalid={props.errorId ? true : undefined}
      />
      <p class="hint" id="question-hint">
        Enter sends; Shift+Enter starts a new line.
      </p>
    </div>
  );
}

function Conversation({
  sessionId,
  domains,
  collections,
  onActivity,
}: {
  sessionId: string;
  domains: Domain[] | undefined;
  collections: Collection[];
  onActivity: () => void;
}) {
  const [picked, setPicked] = useState<string[] | null>(sessionCollections.get(sessionId) ?? null);
  const chosenCollections = picked ?? (collections[0] ? [collections[0].id] : []);
  const choose = (chosen: string[]) => {
    setPicked(chosen);
    sessionCollections.set(sessionId, chosen);
  };
  const loaded = useResource(() => chat.get(sessionId), [sessionId]);
  const [added, setAdded] = useState<ChatMessage[]>([]);
  const [pending, setPending] = useState<string | null>(null);
  const [draft, setDraft] = useState('');
  const [error, setError] = useState<ApiError | null>(null);
  const end = useRef<HTMLDivElement>(null);

  async function ask(content: string) {
    setPending(content);
    setError(null);
    setDraft('');
    try {
      const { user_message: question, assistant_message: answer } = await chat.send(
        sessionId,
        content,
        // Only a private conversation's explicit choice; without one the API asks `default`.
        picked && picked.length > 0 ? picked : null,
      );
      setAdded((messages) => [...messages, question, answer]);
      onActivity();
    } catch (caught) {
      setError(asApiError(caught));
      setDraft(content);
    } finally {
      setPending(null);
      void reloadQuota();
    }
  }

  useEffect(() => {
    const first = firstQuestions.get(sessionId);
    if (first) {
      firstQuestions.delete(sessionId);
      void ask(first);
    }
  }, [sessionId]);

  // The loaded history and the messages added here may overlap when the first answer came back first.
  const seen = new Set<string>();
  const messages = [...(loaded.data?.messages ?? []), ...added].filter(
    (message) => !seen.has(message.id) && seen.add(message.id),
  );
  useEffect(() => end.current?.scrollIntoView({ block: 'nearest' }), [messages.length, pending]);

  const session = loaded.data;
  return (
    <section aria-labelledby="conversation-heading" class="card">
      <h2 id="conversation-heading">{session ? session.title || 'Untitled conversation' : 'Conversation'}</h2>
      {session && (
        <p class="hint" data-testid="asking">
          Asking: {knowledgeBaseName(session.domain, domains)}
          {!session.domain &&
            collections.length > 1 &&
            ` (${collectionNames(chosenCollections, collections).join(', ')})`}
        </p>
      )}
      <ErrorText error={loaded.error} />
      <div role="log" aria-label="Messages">
        <ol class="messages">
          {messages.map((message) => (
            <li key={message.id} class={`message message-${message.role}`}>
              <div class="message-role">{message.role === 'user' ? 'You' : 'Answer'}</div>
              <div class="message-content">{message.content}</div>
              {message.role === 'assistant' && <Sources sources={message.sources} domain={session?.domain ?? null} />}
            </li>
          ))}
          {pending && (
            <>
              <li class="message message-user">
                <div class="message-role">You</div>
                <div class="message-content">{pending}</div>
              </li>
              <li class="message message-assistant" aria-busy="true">
                <div class="message-role">Answer</div>
                <div class="message-content subtle">Searching and answering…</div>
              </li>
            </>
          )}
        </ol>
      </div>
      <div ref={end} />
      <form
        class="stack composer"
        onSubmit={(event) => {
          event.preventDefault();
          if (draft.trim() && !pending) void ask(draft.trim());
        }}
      >
        {session && !session.domain && collections.length > 1 && (
          <CollectionChecklist
            id="conversation"
            legend="Collections"
            hint={chosenCollections.length === 0 ? 'Choose at least one collection.' : COLLECTIONS_HINT}
            all={collections}
            chosen={chosenCollections}
            onChange={choose}
          />
        )}
        <QuestionField
          value={draft}
          onInput={setDraft}
          onSubmit={(event) => {
            event.preventDefault();
            if (draft.trim() && !pending) void ask(draft.trim());
          }}
          errorId={error ? 'ask-error' : undefined}
        />
        <ErrorText error={error} id="ask-error" />
        <div>
          <button
            type="submit"
            class="primary"
            disabled={Boolean(pending) || !draft.trim() || (!session?.domain && chosenCollections.length === 0)}
          >
            {pending ? 'Answering…' : 'Ask'}
          </button>
        </div>
      </form>
    </section>
  );
}
