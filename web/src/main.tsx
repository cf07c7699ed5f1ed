import { render } from 'preact';
import { session } from './api/session';
import { App } from './app';
import './styles.css';

session.start();
render(<App />, document.getElementById('root')!);
