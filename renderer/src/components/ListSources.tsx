import { useRef, useState, type DragEvent, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useActions, useApp, useNow } from './context.js';
import { formatAgo } from '../format.js';
import type { ListSource } from '../store/types.js';
import { detach } from '../detach.js';

const NO_SOURCES: ListSource[] = [];

/** Where the list came from, and every source with how it last went (a <details>, closed unless something failed). */
export function ListOrigin() {
  const { t } = useTranslation();
  const list = useApp((s) => s.status?.list ?? null);
  const now = useNow();
  if (!list || list.nodes === 0) return null;
  const failed = list.sources.filter((x) => x.ok === false).length;
  return (
    <div className="list-origin">
      <p className="muted" data-testid="list-origin">
        {t('list.from', {
          count: list.nodes,
          via: t(`list.via.${list.via}`),
          ago: formatAgo(list.fetchedAt, now(), t),
        })}
        {list.source && list.source !== 'import' ? <span className="url"> · {list.source}</span> : null}
      </p>
      <SkippedRows skipped={list.skipped} />
      <details open={failed > 0 && failed === list.sources.length}>
        <summary>{t('list.sources', { count: list.sources.length, failed })}</summary>
        <SourceList sources={list.sources} />
      </details>
    </div>
  );
}

/** The reasons a list's rows were not used, grouped the way a user can act on them. */
function skipGroup(reason: string): 'mismatch' | 'local' | 'private' | 'malformed' {
  if (reason === 'remote-mismatch') return 'mismatch';
  if (reason === 'private-address') return 'private';
  if (reason.endsWith('-address')) return 'local';
  return 'malformed';
}

function SkippedRows({ skipped }: { skipped: Readonly<Record<string, number>> }) {
  const { t } = useTranslation();
  const groups = new Map<string, number>();
  for (const [reason, n] of Object.entries(skipped))
    groups.set(skipGroup(reason), (groups.get(skipGroup(reason)) ?? 0) + n);
  if (groups.size === 0) return null;
  const what = [...groups].map(([g, count]) => t(`list.skip.${g}`, { count })).join(' · ');
  return (
    <p className="muted" data-testid="list-skipped">
      {t('list.skipped', { what })}
    </p>
  );
}

function SourceList({ sources }: { sources: readonly ListSource[] }) {
  const { t } = useTranslation();
  const now = useNow();
  if (sources.length === 0) return <p className="muted">{t('list.noSources')}</p>;
  return (
    <ul className="sources">
      {sources.map((s) => (
        <li key={s.url} data-ok={s.ok === null ? undefined : String(s.ok)}>
          <span className="source-kind">{t(`list.kind.${s.kind}`)}</span> <span className="url">{s.url}</span>{' '}
          <span className={s.ok === false ? 'source-failed' : 'muted'}>
            {s.ok === null
              ? t('list.state.untried')
              : s.ok
                ? t('list.state.ok', { ago: formatAgo(s.at, now(), t), path: t(`list.path.${s.via ?? 'direct'}`) })
                : t('list.state.failed', {
                    ago: formatAgo(s.at, now(), t),
                    path: t(`list.path.${s.via ?? 'direct'}`),
                    error: s.error ?? '',
                  })}
          </span>
        </li>
      ))}
    </ul>
  );
}

/** Reads a picked or dropped file and imports it; says how it went. */
function useImport(): { importFile(f: File): Promise<void>; said: { ok: boolean; text: string } | null } {
  const { t } = useTranslation();
  const actions = useActions();
  const [said, setSaid] = useState<{ ok: boolean; text: string } | null>(null);
  return {
    said,
    importFile: async (f: File) => {
      const r = await actions.importList(await f.text());
      setSaid(
        r.ok
          ? { ok: true, text: t('list.import.done', { count: r.value.imported, total: r.value.nodes }) }
          : { ok: false, text: t('list.import.failed', { message: r.error.message }) },
      );
    },
  };
}

/** "Import list file…": a button over a hidden file input; `onDrop` handlers for a drop zone. */
export function ImportButton({ label }: { label?: string }) {
  const { t } = useTranslation();
  const input = useRef<HTMLInputElement>(null);
  const { importFile, said } = useImport();
  return (
    <span className="import">
      <button type="button" onClick={() => input.current?.click()}>
        {label ?? t('list.import.button')}
      </button>
      <input
        ref={input}
        type="file"
        accept=".csv,.txt,text/csv,text/plain"
        className="sr-only"
        aria-label={label ?? t('list.import.button')}
        tabIndex={-1}
        onChange={(e) => {
          const f = e.target.files?.[0];
          e.target.value = '';
          if (f) detach(importFile(f));
        }}
      />
      {said ? (
        <span role={said.ok ? 'status' : 'alert'} className={said.ok ? 'import-ok' : 'field-error'}>
          {said.text}
        </span>
      ) : null}
    </span>
  );
}

/** A view that takes a dropped list file (the Nodes view, the no-list help). */
export function useListDrop(): {
  dragging: boolean;
  said: { ok: boolean; text: string } | null;
  handlers: { onDragOver(e: DragEvent): void; onDragLeave(): void; onDrop(e: DragEvent): void };
} {
  const [dragging, setDragging] = useState(false);
  const { importFile, said } = useImport();
  const hasFile = (e: DragEvent): boolean => [...(e.dataTransfer?.types ?? [])].includes('Files');
  return {
    dragging,
    said,
    handlers: {
      onDragOver: (e) => {
        if (!hasFile(e)) return;
        e.preventDefault();
        setDragging(true);
      },
      onDragLeave: () => setDragging(false),
      onDrop: (e) => {
        if (!hasFile(e)) return;
        e.preventDefault();
        setDragging(false);
        const f = e.dataTransfer.files[0];
        if (f) detach(importFile(f));
      },
    },
  };
}

/**
 * No node list yet: what Gatehop tried (each source and why it failed) and the two things the user
 * can do about it: add a source URL, or import a list file (picked or dropped).
 */
export function NoListHelp() {
  const { t } = useTranslation();
  const sources = useApp((s) => s.status?.list?.sources ?? NO_SOURCES);
  const refreshing = useApp((s) => s.status?.list?.refreshing ?? false);
  const actions = useActions();
  const [url, setUrl] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [added, setAdded] = useState(false);
  const drop = useListDrop();
  const onAdd = async (e: FormEvent) => {
    e.preventDefault();
    const u = url.trim();
    if (!/^https?:\/\/\S+$/i.test(u)) {
      setError(t('list.none.badUrl'));
      return;
    }
    const r = await actions.addListSource(u);
    if (r.ok) {
      setUrl('');
      setError(null);
      setAdded(true);
    } else setError(r.error.message);
  };
  const tried = sources.filter((s) => s.ok !== null);
  return (
    <section className={`no-list${drop.dragging ? ' dragging' : ''}`} aria-labelledby="no-list-h" {...drop.handlers}>
      <h3 id="no-list-h">{t('list.none.title')}</h3>
      <p>{t('list.none.body')}</p>
      {refreshing ? (
        <p className="muted" role="status">
          {t('list.none.trying')}
        </p>
      ) : null}
      {tried.length > 0 ? (
        <>
          <p className="muted">{t('list.none.tried')}</p>
          <SourceList sources={tried} />
        </>
      ) : (
        <p className="muted">{t('list.none.nothingTried')}</p>
      )}
      <p>{t('list.none.then')}</p>
      <ol className="no-list-steps">
        <li>
          <form onSubmit={(e) => detach(onAdd(e))} className="add-source" noValidate>
            <label htmlFor="add-source-url">{t('list.none.addSource')}</label>
            <p className="muted hint" id="add-source-hint">
              {t('list.none.addSourceHint')}
            </p>
            <span className="row">
              <input
                id="add-source-url"
                type="url"
                dir="ltr"
                inputMode="url"
                placeholder="https://…/api/iphone/"
                value={url}
                aria-describedby="add-source-hint"
                aria-invalid={!!error}
                onChange={(e) => (setUrl(e.target.value), setError(null), setAdded(false))}
              />
              <button type="submit">{t('list.none.add')}</button>
            </span>
            {error ? (
              <p role="alert" className="field-error">
                {error}
              </p>
            ) : null}
            {added ? <p role="status">{t('list.none.added')}</p> : null}
          </form>
        </li>
        <li>
          <p className="muted hint">{t('list.none.importHint')}</p>
          <ImportButton label={t('list.none.importFile')} />
          {drop.said ? (
            <p role={drop.said.ok ? 'status' : 'alert'} className={drop.said.ok ? 'import-ok' : 'field-error'}>
              {drop.said.text}
            </p>
          ) : null}
        </li>
      </ol>
    </section>
  );
}
