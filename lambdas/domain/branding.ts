/** WCAG 2 contrast ratio of white text on a #RRGGBB colour (1 to 21). */
export function contrastWithWhite(color: string): number {
  const channel = (i: number) => {
    const c = parseInt(color.slice(1 + i * 2, 3 + i * 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
  return 1.05 / (luminance + 0.05);
}

/** The contrast the page's white button text needs on the brand colour (WCAG AA, normal text). */
export const MIN_BUTTON_CONTRAST = 4.5;
