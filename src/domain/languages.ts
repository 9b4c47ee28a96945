// The languages the client sees: the checkout page's and the e-mails'. One list for both, so an e-mail is always in a
// language the page offered.
export const LANGUAGES = ['en', 'de'] as const;
export type Language = (typeof LANGUAGES)[number];

export const isLanguage = (value: string | null | undefined): value is Language => (LANGUAGES as readonly string[]).includes(value ?? '');

/** The supported language an Accept-Language header prefers most (with its q-values), or null when it names none. */
export function preferredLanguage(acceptLanguage: string | null | undefined): Language | null {
  const preferences = (acceptLanguage ?? '')
    .slice(0, 200)
    .split(',')
    .map((part, order) => {
      const [range = '', ...params] = part.trim().split(';');
      const q = Number(params.find((p) => p.trim().startsWith('q='))?.trim().slice(2) ?? '1');
      return { code: range.slice(0, 2).toLowerCase(), q: Number.isFinite(q) ? q : 0, order };
    })
    .filter((p) => p.q > 0 && isLanguage(p.code))
    .sort((a, b) => b.q - a.q || a.order - b.order);
  return (preferences[0]?.code as Language | undefined) ?? null;
}
