// The wire contract of the admin API: every type that crosses HTTP, a server-sent event stream or
// the listen-in socket, as TypeBox schemas. It imports nothing of the server; the server's routes,
// its stores and the console (web/) all take their types from here.
export * from './access.js';
export * from './calls.js';
export * from './campaigns.js';
export * from './common.js';
export * from './dnc.js';
export * from './events.js';
export * from './operations.js';
export * from './webhooks.js';
