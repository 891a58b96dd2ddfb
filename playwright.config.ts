import { defineConfig } from '@playwright/test';

/**
 * Dashboard end-to-end tests on Debian's chromium (never a downloaded browser). The global set-up builds
 * web/ when needed and starts one demo stack (engine + dashboard on a fresh embedded PostgreSQL, CRM and
 * model doubles, the Agent Worker when present); tests read its URL and tokens from process.env.
 */
process.env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = '1';

export default defineConfig({
  testDir: 'test/e2e',
  testMatch: '**/*.spec.ts',
  globalSetup: './test/e2e/global-setup.ts',
  workers: 2,
  fullyParallel: false,
  projects: [
    // axe on every page in four views: 4 tests of ~40 s, mostly one browser page's CPU each, so two at a
    // time on the two cores. They share the stack with nothing else while they run.
    { name: 'a11y', testMatch: 'a11y.spec.ts', fullyParallel: true, workers: 2 },
    // The stories one at a time and after the a11y pass: they assert counts that move by what each did
    // (the home charts, the inbox title), which another test's refund would move too. A failed a11y pass
    // leaves them unrun: fix it first.
    { name: 'flows', testIgnore: 'a11y.spec.ts', workers: 1, dependencies: ['a11y'] },
  ],
  timeout: 60_000,
  expect: { timeout: 15_000 },
  reporter: [['list']],
  outputDir: 'test-results/playwright',
  use: {
    headless: true,
    viewport: { width: 1280, height: 900 },
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
    },
  },
});
