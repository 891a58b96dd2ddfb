/** oidc-provider 8 ships no types (9 does, but warns on Node 20); the demo provider uses it untyped. */
declare module 'oidc-provider';
