import {
  useCallback,
  useEffect,
  useRef,
  useState,
  type RefObject,
} from 'react';

/** How close to the end of the page still counts as "at the end" (a wheel notch is about 100 px). */
const SLACK_PX = 48;
/** How long the end stays followed after an answer ended. */
const SETTLE_MS = 1500;

function atEnd(): boolean {
  const page = document.documentElement;
  return window.innerHeight + window.scrollY >= page.scrollHeight - SLACK_PX;
}

function toEnd(): void {
  // Not smooth: the scroll events of an animation half-way would read as the person scrolling up.
  window.scrollTo({ top: document.documentElement.scrollHeight });
}

/**
 * Keeps the end of the page in view while `content` grows (an answer streaming in), unless the person
 * scrolled up to read: then `following` is false until they are back at the end, or `jump` brings them there.
 */
export function useFollowScroll(
  content: RefObject<HTMLElement | null>,
  active: boolean,
): { following: boolean; jump: () => void } {
  const [following, setFollowing] = useState(true);
  // The same as `following`, but current at once: a resize can come between the person's scroll and the
  // render that stops following, and must not pull them back to the end.
  const followingNow = useRef(true);
  // Where the page was when this hook last saw it (a scroll event, or its own scroll to the end).
  const lastY = useRef(0);

  const follow = useCallback((value: boolean) => {
    followingNow.current = value;
    setFollowing(value);
  }, []);

  // Scrolling up, away from the end, stops following; being back at the end resumes it. Following itself
  // only ever scrolls down, and the page may have grown again before its scroll event arrives: that is not
  // the person leaving the end.
  useEffect(() => {
    lastY.current = window.scrollY;
    const onScroll = () => {
      const y = window.scrollY;
      if (atEnd()) follow(true);
      else if (y < lastY.current) follow(false);
      lastY.current = y;
    };
    window.addEventListener('scroll', onScroll, { passive: true });
    return () => window.removeEventListener('scroll', onScroll);
  }, [follow]);

  // After an answer ends, its stored version, usage and actions still arrive: followed a moment more.
  const streamed = useRef(false);
  useEffect(() => {
    const element = content.current;
    if (active) streamed.current = true;
    if (!following || !element || !streamed.current) return;
    const observer = new ResizeObserver(() => {
      // The person scrolled up since the last scroll event this hook saw (its event not dispatched yet).
      if (window.scrollY < lastY.current && !atEnd()) follow(false);
      if (!followingNow.current) return;
      toEnd();
      lastY.current = window.scrollY;
    });
    observer.observe(element);
    const settled = active
      ? undefined
      : setTimeout(() => {
          observer.disconnect();
          streamed.current = false;
        }, SETTLE_MS);
    return () => {
      observer.disconnect();
      clearTimeout(settled);
    };
  }, [content, active, following, follow]);

  const jump = useCallback(() => {
    toEnd();
    lastY.current = window.scrollY;
    follow(true);
  }, [follow]);

  return { following, jump };
}
