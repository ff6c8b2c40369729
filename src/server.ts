import './web/server.ts';
