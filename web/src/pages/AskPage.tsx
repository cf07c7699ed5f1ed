import { useEffect, useRef, useState } from 'preact/hooks';
import { chat, documents } from '../api/endpoints';
import { type ApiError, asApiError } from '../api/http';
import type { ChatMessage, ChatSession, Domain } from '../api/types';
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

export function AskPage({ sessionId }: { sessionId?: string }) {
  const bases = useKnowledgeBases();
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
              onActivity={() => loadSessions()}
            />
          ) : (
            <NewConversation
              loading={bases.loading}
              domains={bases.data?.allowed ?? []}
              domainsError={bases.error}
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
  onStarted: (session: ChatSession) => void;
}

function NewConversation({ loading, domains, domainsError, onStarted }: NewConversationProps) {
  const [domain, setDomain] = useState('');
  const [question, setQuestion] = useState('');
  const { busy, error, run } = useAction();
  const chosen = domains.find((candidate) => candidate.slug === domain);
  // Whether the private knowledge base has anything to answer from yet.
  const privateDocuments = useResource(() => documents.list(1, 0), []);
  const noDocuments = domain === '' && privateDocuments.data?.count === 0;
  const canUpload = useRoleAtLeast('member');

  async function submit(event: Event) {
    event.preventDefault();
    const content = question.trim();
    if (!content) return;
    await run(
      async () => {
        const session = await chat.create(content.length > 80 ? `${content.slice(0, 79)}…` : content, domain || null);
        firstQuestions.set(session.id, content);
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
        {noDocuments && (
          <div class="empty-state" data-testid="no-documents">
            <p>
              <strong>Your private knowledge base has no documents yet.</strong>{' '}
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
          <button type="submit" class="primary" disabled={busy || !question.trim()}>
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
  onActivity,
}: {
  sessionId: string;
  domains: Domain[] | undefined;
  onActivity: () => void;
}) {
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
      const { user_message: question, assistant_message: answer } = await chat.send(sessionId, content);
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
      {session && <p class="hint">Asking: {knowledgeBaseName(session.domain, domains)}</p>}
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
          <button type="submit" class="primary" disabled={Boolean(pending) || !draft.trim()}>
            {pending ? 'Answering…' : 'Ask'}
          </button>
        </div>
      </form>
    </section>
  );
}
