import type { Metadata, Viewport } from 'next';
import type { ReactNode } from 'react';
import { Shell } from '../components/Shell';
import { SessionProvider } from '../lib/session';
import '@xyflow/react/dist/style.css';
import './globals.css';
import './views.css';

export const metadata: Metadata = { title: 'Abada', description: 'Approve what your agents propose.' };
export const viewport: Viewport = { width: 'device-width', initialScale: 1 };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <SessionProvider>
          <Shell>{children}</Shell>
        </SessionProvider>
      </body>
    </html>
  );
}
