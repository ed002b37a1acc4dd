// <fencelab-player story="paused-worker" variant="broken" step="19" parts="controls,caption">
// A Fencelab embed for any page: it makes the iframe itself and fits it to the height the
// embedded page reports, so nobody has to guess one. Attributes: story, variant, step, parts
// (embed parts, default "controls,caption"), theme (light or dark), scenario (a scenario's JSON
// instead of a story), src (the player's page, default the index.html beside this script),
// label (the frame's accessible name) and height (the first height, in CSS pixels).
(() => {
  if (customElements.get('fencelab-player')) return;
  // The page build ships this file beside its index.html, so that is the default player.
  const script = document.currentScript;
  const beside = script ? new URL('index.html', script.src).href : 'index.html';
  const players = new Set();

  // The page's custom= parameter: the scenario's JSON, compacted, as base64url UTF-8.
  const custom = (text) => {
    let json = text;
    try { json = JSON.stringify(JSON.parse(text)); } catch { /* the page names what is wrong */ }
    let bytes = '';
    for (const b of new TextEncoder().encode(json)) bytes += String.fromCharCode(b);
    return btoa(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  };

  class FencelabPlayer extends HTMLElement {
    static observedAttributes = ['story', 'variant', 'step', 'parts', 'theme', 'scenario', 'src', 'label', 'height'];

    constructor() {
      super();
      // A shadow root keeps the site's styles off the frame; the element's own children (a
      // link for readers without JavaScript) are not shown while it runs.
      const root = this.attachShadow({ mode: 'open' });
      root.innerHTML = '<style>:host{display:block}iframe{display:block;width:100%;border:0}</style>';
      this.frame = document.createElement('iframe');
      this.frame.loading = 'lazy';
      root.append(this.frame);
      this.url = '';
    }

    connectedCallback() {
      players.add(this);
      this.update();
    }

    disconnectedCallback() {
      players.delete(this);
    }

    // Several attributes set in a row make one navigation.
    attributeChangedCallback() {
      if (this.pending || !this.isConnected) return;
      this.pending = true;
      queueMicrotask(() => {
        this.pending = false;
        this.update();
      });
    }

    fragment() {
      const get = (name) => this.getAttribute(name);
      const parts = [];
      if (get('scenario')) parts.push(`custom=${custom(get('scenario'))}`);
      else {
        parts.push(`scenario=${get('story') ?? ''}`);
        if (get('variant')) parts.push(`variant=${get('variant')}`);
      }
      if (get('step')) parts.push(`step=${get('step')}`);
      parts.push(`embed=${get('parts') ?? 'controls,caption'}`.replace(/=$/, '=diagram'));
      if (get('theme')) parts.push(`theme=${get('theme')}`);
      return parts.join('&');
    }

    update() {
      const get = (name) => this.getAttribute(name);
      const page = new URL(get('src') || beside, document.baseURI);
      page.hash = this.fragment();
      const story = get('scenario') ? 'a scenario' : `${get('story')}${get('variant') ? ` (${get('variant')})` : ''}`;
      this.frame.title = get('label') || `Fencelab: ${story}`;
      // Until the page reports its height: the author's hint, or one that fits the default parts.
      if (!this.fitted) this.frame.style.height = `${Number(get('height')) || 640}px`;
      if (page.href !== this.url) {
        this.url = page.href;
        this.frame.src = page.href;
      }
    }

    fit(height) {
      this.fitted = true;
      this.frame.style.height = `${Math.ceil(height)}px`;
    }
  }

  // One listener for every player: a message belongs to the player whose frame sent it.
  addEventListener('message', (e) => {
    const d = e.data;
    if (!d || d.type !== 'fencelab:height' || !(d.height > 0)) return;
    for (const player of players) if (player.frame.contentWindow === e.source) player.fit(d.height);
  });

  customElements.define('fencelab-player', FencelabPlayer);
})();
