import { ScreenTitle } from '../screen.js';

export function NotFound() {
  return (
    <>
      <ScreenTitle title="Not found">Not found</ScreenTitle>
      <p>
        There is no such page. <a href="/console">Back to live calls</a>
      </p>
    </>
  );
}
