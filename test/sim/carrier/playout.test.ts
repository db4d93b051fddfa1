import { describe, expect, it } from 'vitest';
import { FRAME_BYTES, PhonePlayout } from '../../../src/sim/carrier/playout.js';

function speaker(maxQueuedBytes?: number) {
  const log: string[] = [];
  const playout = new PhonePlayout(
    {
      onMark: (name, flushed) => log.push(`mark ${name}${flushed ? ' flushed' : ''}`),
      onStarted: () => log.push('started'),
      onStopped: (bytes) => log.push(`stopped ${bytes}`),
    },
    maxQueuedBytes,
  );
  return { playout, log };
}

describe('PhonePlayout', () => {
  it('plays one 160-byte frame per tick and keeps exactly what played', () => {
    const { playout, log } = speaker();
    playout.enqueueAudio(Buffer.alloc(100, 1));
    playout.enqueueAudio(Buffer.alloc(300, 2));
    playout.tick();
    expect(playout.heard()).toEqual(Buffer.concat([Buffer.alloc(100, 1), Buffer.alloc(60, 2)]));
    playout.tick();
    playout.tick();
    expect(playout.heard()).toHaveLength(400);
    expect(log).toEqual(['started']);
    playout.tick();
    expect(log).toEqual(['started', 'stopped 400']);
  });

  it('echoes a mark only once the frame carrying the audio before it has finished', () => {
    const { playout, log } = speaker();
    playout.enqueueAudio(Buffer.alloc(FRAME_BYTES * 2));
    playout.enqueueMark('m1');
    playout.tick();
    playout.tick();
    expect(log).toEqual(['started']);
    playout.tick();
    expect(log).toEqual(['started', 'mark m1', 'stopped 320']);
  });

  it('echoes a mark at once when nothing is queued or playing', () => {
    const { playout, log } = speaker();
    playout.enqueueMark('idle');
    expect(log).toEqual(['mark idle']);
  });

  it('holds a mark sent while the last frame is still playing until that frame ends', () => {
    const { playout, log } = speaker();
    playout.enqueueAudio(Buffer.alloc(FRAME_BYTES));
    playout.tick();
    playout.enqueueMark('late');
    expect(log).toEqual(['started']);
    playout.tick();
    expect(log).toEqual(['started', 'mark late', 'stopped 160']);
  });

  it('clear drops unplayed audio and releases every pending mark at once', () => {
    const { playout, log } = speaker();
    playout.enqueueAudio(Buffer.alloc(1000, 7));
    playout.enqueueMark('a');
    playout.enqueueAudio(Buffer.alloc(500, 8));
    playout.enqueueMark('b');
    playout.tick();
    expect(playout.queuedAudioBytes).toBe(1340);
    expect(playout.clear()).toBe(1340);
    expect(log).toEqual(['started', 'mark a flushed', 'mark b flushed', 'stopped 160']);
    playout.tick();
    expect(playout.heard()).toEqual(Buffer.alloc(160, 7));
  });

  it('hangUp reports what never played and echoes nothing', () => {
    const { playout, log } = speaker();
    playout.enqueueAudio(Buffer.alloc(480));
    playout.enqueueMark('never');
    playout.tick();
    expect(playout.hangUp()).toBe(320);
    expect(log).toEqual(['started', 'stopped 160']);
  });

  it('drops audio beyond its buffer bound and counts it', () => {
    const { playout } = speaker(200);
    playout.enqueueAudio(Buffer.alloc(150));
    playout.enqueueAudio(Buffer.alloc(150));
    expect(playout.queuedAudioBytes).toBe(200);
    expect(playout.droppedOnOverflowBytes).toBe(100);
  });
});
