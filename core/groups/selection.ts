import type { Logger } from '../common/index.js';
import type { Selection } from '../store/index.js';

/** The group name Clash dashboards see; also the key of the persisted selection. */
export const GROUP_NAME = 'GATEHOP';

export interface SelectionStore {
  selection(group: string): Selection | null;
  setSelection(s: Selection): void;
}

/**
 * Mode (auto / manual) and the manual pin, persisted in the store's selection cache and restored
 * at start (else the configured default node, else none: the best node).
 */
export class SelectionState {
  #mode: 'auto' | 'manual';
  #pinned: string | null;

  constructor(
    private readonly store: SelectionStore,
    defaults: { mode: 'auto' | 'manual'; defaultNode?: string | undefined },
    private readonly log: Logger,
  ) {
    const saved = store.selection(GROUP_NAME);
    this.#mode = saved?.mode ?? defaults.mode;
    this.#pinned = saved?.nodeId ?? defaults.defaultNode ?? null;
    if (saved)
      log.info(
        { event: 'selection-restored', mode: this.#mode, pinned: this.#pinned },
        `restored ${this.#mode} mode${this.#pinned ? ` (pinned ${this.#pinned})` : ''}`,
      );
  }

  get mode(): 'auto' | 'manual' {
    return this.#mode;
  }

  get pinned(): string | null {
    return this.#pinned;
  }

  setMode(mode: 'auto' | 'manual'): void {
    this.#mode = mode;
    this.#save();
  }

  /** Lets the pin go: back to auto (the pinned node is not the one the user chose any more). */
  unpin(): void {
    this.#pinned = null;
    this.#mode = 'auto';
    this.#save();
  }

  /** Pinning a node puts the group in manual mode. */
  pin(nodeId: string): void {
    this.#pinned = nodeId;
    this.#mode = 'manual';
    this.#save();
  }

  #save(): void {
    this.store.setSelection({ group: GROUP_NAME, nodeId: this.#pinned, mode: this.#mode });
    this.log.info(
      { event: 'selection-saved', mode: this.#mode, pinned: this.#pinned },
      `selection: ${this.#mode}${this.#pinned ? ` (pinned ${this.#pinned})` : ''}`,
    );
  }
}
