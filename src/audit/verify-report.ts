/** The text `warden audit verify` prints for a report (pure). */
import type { AuditVerifyReport } from "./verify.js";

/**
 * The lines of `report`: `tampered: <fault>` alone, or `intact: ...` followed by which key signed,
 * how many streams are signed to their last record, and each stream with an unsigned tail (records
 * after its last checkpoint: nothing proves they were not cut off).
 */
export function formatVerifyReport(report: AuditVerifyReport): string[] {
  if (report.fault) return [`tampered: ${report.fault.message}`];
  const head = `intact: ${report.records} record(s) in ${report.streams.length} stream(s), ${report.checkpoints} checkpoint(s)`;
  const lines = [
    report.unchained > 0 ? `${head}; ${report.unchained} line(s) before the chain not checked` : head,
  ];
  if (report.keyIds.length === 0) lines.push("signed: no checkpoint (nothing signs these records)");
  else if (report.trustedKeyId)
    lines.push(`signed by key ${report.trustedKeyId} (the key given with --public-key)`);
  else
    lines.push(
      `signed by key(s) ${report.keyIds.join(", ")} announced in the file (pass --public-key to check they are yours)`,
    );
  const tails = report.streams.filter((s) => s.unsigned > 0);
  lines.push(`signed to their last record: ${report.streams.length - tails.length} stream(s)`);
  for (const s of tails) {
    const first = s.signed ? s.signed.seq + 1 : 0;
    const seqs = s.unsigned === 1 ? `seq ${first}` : `seq ${first}–${first + s.unsigned - 1}`;
    const after = s.signed ? `after its checkpoint at line ${s.signed.line}` : "no checkpoint";
    lines.push(
      `unsigned: ${s.stream} ${seqs} (${s.unsigned} record(s), ${after}; last at line ${s.lastLine})`,
    );
  }
  return lines;
}
