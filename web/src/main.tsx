import { render } from 'preact';
import { session } from './api/session';
import { App } from './app';
import './styles.css';

session.start();
const root = document.getElementById('root');
if (root) render(<App />, root);
