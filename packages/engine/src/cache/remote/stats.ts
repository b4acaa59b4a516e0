// What the remote cache did in one build: the 'remote' build event (report/events.ts) carries it.
export type RemoteMode = 'read' | 'readwrite';

export interface RemoteStats {
  url: string;
  mode: RemoteMode;
  /** Targets restored from the remote cache, objects and bytes downloaded. */
  hits: number;
  misses: number;
  downloaded: { objects: number; bytes: number };
  /** Action entries and objects uploaded (objects the server already had are not counted). */
  uploaded: { entries: number; objects: number; bytes: number };
  /** Targets built here but not uploaded: check-determinism found their two builds differ. */
  notUploaded: string[];
  /** Entries refused (poisoned, unsigned, unknown signer, corrupt object), with the reason of each. */
  refused: number;
  refusals: string[];
  /** Why the server was dropped for the rest of the build, if it was. */
  unavailable?: string;
  /** Why nothing is uploaded though the mode is readwrite, if so. */
  readOnlyBecause?: string;
}
