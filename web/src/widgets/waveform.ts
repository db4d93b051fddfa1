// The recording's two channels drawn by wavesurfer.js (split channels: the caller above, what the
// caller heard below) over the page's own <audio> element, with each turn marked. Loaded on demand,
// so the screens that need no waveform do not download it.
import WaveSurfer from 'wavesurfer.js';
import RegionsPlugin from 'wavesurfer.js/dist/plugins/regions.esm.js';

export interface Marker {
  startS: number;
  endS: number;
  role: 'caller' | 'agent';
  text: string;
}

/** Spans are shaded lightly; a turn with no known length is a solid mark where it came. */
const SPAN = { caller: 'rgba(31, 95, 191, 0.18)', agent: 'rgba(191, 95, 31, 0.18)' };
const MARK = { caller: 'rgba(31, 95, 191, 0.9)', agent: 'rgba(191, 95, 31, 0.9)' };

/** The nonce the server put in the page, for the one style element the widget adds. */
function cspNonce(): string | undefined {
  const meta = document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]');
  return meta?.nonce || undefined;
}

export function drawWaveform(container: HTMLElement, media: HTMLAudioElement, markers: Marker[]): () => void {
  const regions = RegionsPlugin.create();
  const wave = WaveSurfer.create({
    container,
    media,
    height: 56,
    splitChannels: [
      { waveColor: '#1f5fbf', progressColor: '#123a75' },
      { waveColor: '#bf5f1f', progressColor: '#75390f' },
    ],
    normalize: true,
    cspNonce: cspNonce(),
    plugins: [regions],
  });
  wave.on('decode', () => {
    for (const marker of markers) {
      regions.addRegion({
        start: marker.startS,
        end: marker.endS,
        // The caller's turns mark the upper channel, the agent's the lower.
        channelIdx: marker.role === 'caller' ? 0 : 1,
        color: (marker.endS > marker.startS ? SPAN : MARK)[marker.role],
        drag: false,
        resize: false,
      });
    }
  });
  return () => wave.destroy();
}
