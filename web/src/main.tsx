// The console's entry: one render of the app into the page that /console serves.
import { render } from 'preact';
import { App } from './app.js';
import './styles.css';

render(<App />, document.getElementById('app')!);
