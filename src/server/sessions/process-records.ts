/**
 * A session's background-process records in its session record: written when a start (or a
 * forgotten process) changes them, so a server that restarts tells the adopted sandbox's helper
 * exactly which shims are the session's (src/process). The records never come back from the
 * sandbox, so what the policy was told a process is survives the restart unchanged.
 */
import type { ProcessRecord } from "../../process/index.js";
import type { SessionRecord } from "./record-store.js";

/** Where a session's record lives, and how it is written (RecordStore.put). */
export interface ProcessRecordSink {
  /** The session's record once it exists (creation writes it after the session is open). */
  record(): SessionRecord | undefined;
  put(record: SessionRecord): Promise<void>;
}

/**
 * The onRecordsChanged of a session's processes: each change is written in order (one write at a
 * time, the latest records last), into the record `sink` holds. A change before the record exists
 * is kept and written with the record's first write by the caller (see createSession).
 */
export function processRecordWriter(sink: ProcessRecordSink): (records: ProcessRecord[]) => Promise<void> {
  let chain: Promise<void> = Promise.resolve();
  return (records) => {
    const write = async () => {
      const record = sink.record();
      if (!record) return;
      record.processes = records;
      await sink.put(record);
    };
    chain = chain.then(write, write);
    return chain;
  };
}
