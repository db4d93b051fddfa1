// Vite's module types: CSS imports, import.meta.env.
/// <reference types="vite/client" />
