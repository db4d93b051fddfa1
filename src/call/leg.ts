// What the call session may ask of the phone leg: the media socket through the carrier's codec,
// and the carrier's call-control API where there is one. The session never learns which carrier.

export interface CallLeg {
  sendAudio(payload: Buffer): void;
  clear(): void;
  mark(name: string): void;
  /** Ends the phone call: asks the carrier's API where there is one, and closes the media stream. */
  hangup(): void;
  /** Closes the media stream only (after a transfer the call goes on without us). */
  closeStream(): void;
  /** Whether `transfer` can work on this call. */
  readonly canTransfer: boolean;
  transfer(target: string): Promise<void>;
}
