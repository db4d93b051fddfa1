// What the carriers' requests, media streams and REST APIs do.
import { Counter, type Registry } from 'prom-client';

export function carrierMetrics(r: Registry[]) {
  return {
    carrierRequestsRejected: new Counter({
      name: 'callbridge_carrier_requests_rejected_total',
      help: 'Carrier webhooks and media upgrades refused, by reason.',
      labelNames: ['carrier', 'reason'],
      registers: r,
    }),
    carrierFramesInvalid: new Counter({
      name: 'callbridge_carrier_frames_invalid_total',
      help: 'Carrier media frames that could not be read, by reason.',
      labelNames: ['carrier', 'reason'],
      registers: r,
    }),
    carrierApiRequests: new Counter({
      name: 'callbridge_carrier_api_requests_total',
      help: 'Requests to a carrier REST API, by carrier, operation and outcome (ok, failed).',
      labelNames: ['carrier', 'operation', 'outcome'],
      registers: r,
    }),
    carrierMediaReorder: new Counter({
      name: 'callbridge_carrier_media_reorder_total',
      help: 'Out-of-order carrier media frames, by carrier and outcome (reordered, late, duplicate, gap, resync).',
      labelNames: ['carrier', 'outcome'],
      registers: r,
    }),
    carrierStreamErrors: new Counter({
      name: 'callbridge_carrier_stream_errors_total',
      help: 'Error frames a carrier sent on a media stream.',
      labelNames: ['carrier'],
      registers: r,
    }),
  };
}
