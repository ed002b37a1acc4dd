// <fencelab-player story="paused-worker" variant="broken" step="19" parts="controls,caption">
// A Fencelab embed for any page: it makes the iframe itself and fits it to the height the
// embedded page reports, so nobody has to guess one. Attributes: story, variant, step, parts
// (embed parts, default "controls,caption"), theme (light, dark, or book: follow the mdBook
// theme chosen on this page, light for Light and Rust, dark for Coal, Navy and Ayu), scenario (a scenario's JSON
// instead of a story), history (a recorded history's address on this site, instead of a story),
// title (the title the player shows), src (the player's page, default the index.html beside this
// script), label (the frame's accessible name) and height (the first height, in CSS pixels).
// The element's children (a still of the story from `fencelab render`, or a link) show until
// the player is ready, without JavaScript, and on paper. With JavaScript the still shows at the
// player's first height (scrolling inside it), and the player loads hidden behind it when it
// comes near the screen or is clicked. A reader must never see the page move, and the player's
// own height is known only once it is ready, so a ready player takes the still's place only when
// that moves nothing in view: when the reader asked for it, when it is out of view (the
// browser's scroll anchoring keeps the text in view where it is when a player above it grows),
// or when it has the still's height. Otherwise it waits behind the still, which says it is ready
// and starts it on a click, until the reader clicks or scrolls it out of view. A player is one
// Tab stop, a button that enters it.
(() => {
  if (customElements.get('fencelab-player')) return;
  // The page build ships this file beside its index.html, so that is the default player.
  const script = document.currentScript;
  const beside = script ? new URL('index.html', script.src).href : 'index.html';
  const players = new Set();
  // Players load a screen's height before they scroll into view.
  const near = new IntersectionObserver((entries) => {
    for (const e of entries) if (e.isIntersecting) e.target.load();
  }, { rootMargin: '100% 0px' });
  // Whether each player is in view: one ready behind its still takes its place once it is not.
  const view = new IntersectionObserver((entries) => {
    for (const e of entries) e.target.viewed(e.isIntersecting);
  });

  // The link parameter each attribute writes; src, label and height are the element's own. The
  // fencelab-links crate holds the same list (its tests read this file and name any difference).
  const PARAMETERS = { story: 'scenario', variant: 'variant', step: 'step', parts: 'embed', theme: 'theme', scenario: 'custom', history: 'history', title: 'title' };
  // The parts shown when the element names none.
  const DEFAULT_PARTS = 'controls,caption';

  // The page's custom= parameter: the scenario's JSON, compacted, as base64url UTF-8.
  const custom = (text) => {
    let json = text;
    try { json = JSON.stringify(JSON.parse(text)); } catch { /* the page names what is wrong */ }
    let bytes = '';
    for (const b of new TextEncoder().encode(json)) bytes += String.fromCharCode(b);
    return btoa(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  };

  // The page fetches a history relative to itself, so an address written relative to the
  // embedding page is rewritten relative to the player's page when both share an origin.
  const relative = (target, page) => {
    if (target.origin !== page.origin) return target.href;
    const from = page.pathname.split('/').slice(0, -1);
    const to = target.pathname.split('/');
    let same = 0;
    while (same < from.length && same < to.length - 1 && from[same] === to[same]) same += 1;
    return '../'.repeat(from.length - same) + to.slice(same).join('/') + target.search;
  };

  // The page's parameters escape these characters in a value.
  const escape = (text) => text.replace(/[%&# "<>]/g, encodeURIComponent);

  // mdBook names its theme by a class on <html>; without one the player follows the reader's
  // own setting.
  const BOOK_THEMES = { light: 'light', rust: 'light', coal: 'dark', navy: 'dark', ayu: 'dark' };
  const bookTheme = () => {
    for (const name of document.documentElement.classList) if (BOOK_THEMES[name]) return BOOK_THEMES[name];
    return null;
  };
  // Players that follow the book's theme change with it.
  new MutationObserver(() => {
    for (const player of players) if (player.getAttribute('theme') === 'book') player.update();
  }).observe(document.documentElement, { attributes: true, attributeFilter: ['class'] });

  class FencelabPlayer extends HTMLElement {
    static observedAttributes = ['story', 'variant', 'step', 'parts', 'theme', 'scenario', 'history', 'title', 'src', 'label', 'height'];

    constructor() {
      super();
      // A shadow root keeps the site's styles off the frame. The element's own children (the
      // still) show in the box until the player takes their place, and on paper. While the
      // player waits, the box lies over its frame, which keeps its place in the page: the swap
      // then changes the `position` of nothing left shown, a change that would stop the
      // browser's scroll anchoring. The button is a 1 px box until it shows: a clipped one of
      // full size would count as moving when it appears. It sits in the top corner, off the
      // still's title and the player's, in the page's blue. The box, which may scroll, is no Tab
      // stop of its own: the button stands for it. A still's caption keeps to four lines in the
      // box (all of it on paper and for screen readers), leaving its picture the room.
      const root = this.attachShadow({ mode: 'open' });
      root.innerHTML = '<style>:host{display:block;position:relative;--fl-lines:4}iframe{display:block;width:100%;border:0}'
        + '.still{overflow:auto}.wait{visibility:hidden}.wait+.still{position:absolute;top:0;left:0;right:0}.gone{display:none}'
        + '.enter{position:absolute;z-index:1;top:8px;right:8px;font:inherit;padding:6px 12px;white-space:nowrap;'
        + 'border:0;border-radius:6px;background:#2455c3;color:#fff;box-shadow:0 1px 4px #0005;cursor:pointer}'
        + '.enter:not(:focus,.ready,.busy){width:1px;height:1px;padding:0;overflow:hidden;clip-path:inset(50%)}'
        + '.enter:is(.ready,.busy){top:calc(var(--fl-pic-top,0px) + 8px)}.still.ready{cursor:pointer}'
        + '@media print{iframe,.enter{display:none}.still{display:block;position:static!important;height:auto!important}:host{--fl-still-h:none!important;--fl-lines:none}}</style>'
        + '<button class="enter" type="button"></button><iframe tabindex="-1"></iframe><div class="still" tabindex="-1"><slot></slot></div>';
      const [enter, frame, box] = root.querySelectorAll('button,iframe,div');
      Object.assign(this, { enter, box, frame, url: '' });
      // One Tab stop per player: its button. The frame's controls stay out of the page's Tab
      // order until a reader enters the player, and leave it again with the focus.
      enter.onclick = () => this.open();
      this.addEventListener('focusout', (e) => {
        if (!this.contains(e.relatedTarget) && e.relatedTarget !== this) frame.tabIndex = -1;
      });
      // A click on the still starts the player at once and hands it the focus; a click that
      // opens its link elsewhere (a new tab or window) is the browser's.
      this.addEventListener('click', (e) => {
        if (!this.still() || e.composedPath()[0] === enter || e.ctrlKey || e.metaKey || e.shiftKey || e.button) return;
        e.preventDefault();
        this.open();
      });
    }

    // The reader asks for the player: it starts now, and takes the focus once it is ready;
    // until then its button shows, saying it is loading.
    open() {
      this.clicked = true;
      this.enter.classList.add('busy');
      this.words();
      this.load();
      if (this.height) this.fit(this.height);
    }

    connectedCallback() {
      players.add(this);
      near.observe(this);
      view.observe(this);
      // A script in the head meets the element before its children (the still) are parsed.
      if (document.readyState === 'loading') addEventListener('DOMContentLoaded', () => this.update(), { once: true });
      else this.update();
    }

    disconnectedCallback() {
      players.delete(this);
      near.unobserve(this);
      view.unobserve(this);
    }

    // Starts the player's page.
    load() {
      this.loading = true;
      this.update();
    }

    // The still's diagram takes the room its words leave in the box and shows its current step,
    // as the player's diagram does: in the middle, its marks a third of the way across. The sign
    // that the player is ready goes in its corner, off the words.
    centre() {
      const pic = this.querySelector('.fl-scroll');
      const svg = pic?.querySelector('svg[data-position]');
      if (!svg) return;
      const top = pic.getBoundingClientRect().top - this.box.getBoundingClientRect().top;
      this.style.setProperty('--fl-still-h', `${Math.max(160, this.box.clientHeight - top)}px`);
      this.style.setProperty('--fl-pic-top', `${top}px`);
      const aim = svg.querySelector(`.mark[data-step="${svg.dataset.position - 1}"]`) ?? svg.querySelector('.now');
      if (!aim) return;
      const [a, p] = [aim.getBoundingClientRect(), pic.getBoundingClientRect()];
      pic.scrollTop += a.top + a.height / 2 - p.top - p.height / 2;
      pic.scrollLeft += a.left - p.left - p.width / 3;
    }

    // Whether the still is shown: the element has children and the player has not taken over.
    still() {
      return !!this.firstElementChild && !this.box.className.includes('gone');
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

    // `own` is the fragment `src` came with: a view the author copied from the page, kept
    // when no attribute names another.
    fragment(page, own) {
      const get = (name) => this.getAttribute(name);
      const parts = [];
      const put = (attribute, value) => parts.push(`${PARAMETERS[attribute]}=${value}`);
      if (get('history')) put('history', escape(relative(new URL(get('history'), document.baseURI), page)));
      else if (get('scenario')) put('scenario', custom(get('scenario')));
      else if (get('story')) {
        put('story', get('story'));
        if (get('variant')) put('variant', get('variant'));
      } else if (own) parts.push(own);
      // With neither, the page says inside the frame that the link names no scenario.
      const has = (attribute) => new RegExp(`(^|&)${PARAMETERS[attribute]}=`).test(parts.join('&'));
      if (get('step') && !has('step')) put('step', get('step'));
      if (!has('parts')) put('parts', (get('parts') ?? DEFAULT_PARTS) || 'diagram');
      const theme = get('theme') === 'book' ? bookTheme() : get('theme');
      if (theme) put('theme', theme);
      if (get('title')) put('title', escape(get('title')));
      // The page then names what is wrong by these attributes rather than by link parameters.
      parts.push('host=element');
      return parts.join('&');
    }

    update() {
      const get = (name) => this.getAttribute(name);
      const page = new URL(get('src') || beside, document.baseURI);
      page.hash = this.fragment(page, page.hash.slice(1));
      // Until the page says what it shows (see `named`).
      if (page.href !== this.url) this.named(this.name());
      // Until the page reports its height: the author's hint, or one that fits the default
      // parts; the still takes it too, and the frame waits hidden behind it.
      if (!this.height) {
        const height = `${Number(get('height')) || 640}px`;
        this.frame.style.height = height;
        if (this.still()) {
          this.box.style.height = height;
          this.frame.className = 'wait';
          this.centre();
          // The still's link and scroller would be stops of their own: the button stands for them.
          for (const el of this.querySelectorAll('a[href],[tabindex]')) el.tabIndex = -1;
        }
      }
      if (!this.loading) return;
      if (page.href !== this.url) {
        this.url = page.href;
        this.frame.src = page.href;
      }
    }

    // What the frame shows, for its accessible name: the title, else the history's file, the
    // scenario or the story.
    name() {
      const get = (name) => this.getAttribute(name);
      if (get('title')) return get('title');
      if (get('history')) return `history ${get('history').split(/[?#]/)[0].split('/').pop()}`;
      if (get('scenario')) return 'a scenario';
      // A still names its story as the player will.
      const still = this.querySelector('.fencelab-still figcaption')?.firstChild?.textContent.trim();
      if (still) return still;
      const own = new URL(get('src') || beside, document.baseURI).hash;
      const linked = own.match(/[#&](?:history|scenario)=([^&]*)/);
      if (!get('story') && linked) return decodeURIComponent(linked[1]).split('/').pop();
      if (!get('story')) return 'no story chosen';
      return `${get('story')}${get('variant') ? ` (${get('variant')})` : ''}`;
    }

    // The page's own name for what it shows (a story's title, not its id).
    named(title) {
      this.frame.title = this.getAttribute('label') || `Fencelab: ${title}`;
      this.words();
    }

    // The button's words stay short, on one line over the player; its name says which player.
    words() {
      const verb = this.ready ? 'Start' : 'Enter';
      this.enter.textContent = this.ready ? 'Start the player' : this.clicked ? 'Loading the player…' : 'Enter the player · Tab passes it by';
      this.enter.ariaLabel = `${verb} the player: ${this.frame.title.replace(/^Fencelab: /, '')}. Tab passes it by.`;
    }

    // The element came into view or left it; a player ready behind its still takes its place
    // once the reader cannot see it, so scrolling back finds the player.
    viewed(on) {
      this.inView = on;
      if (!on && this.ready) this.fit(this.height);
    }

    // The player reports its height. It takes the still's place if that moves nothing the reader
    // sees (see the top of this file); else it waits behind the still, which shows its button.
    fit(height) {
      this.height = Math.ceil(height);
      this.ready = this.still() && !this.clicked && this.inView !== false && Math.abs(this.height - this.box.offsetHeight) > 1;
      this.box.classList.toggle('ready', this.ready);
      this.enter.classList.toggle('ready', this.ready);
      if (!this.ready) {
        this.box.className = 'still gone';
        this.frame.className = '';
        this.frame.style.height = `${this.height}px`;
        if (this.clicked) {
          this.frame.tabIndex = 0;
          this.frame.focus();
        }
        this.clicked = false;
        this.enter.classList.remove('busy');
      }
      this.words();
    }
  }

  // One listener for every player: a message belongs to the player whose frame sent it.
  addEventListener('message', (e) => {
    const d = e.data;
    const player = [...players].find((p) => p.frame.contentWindow === e.source);
    if (!d || !player) return;
    if (d.type === 'fencelab:height' && d.height > 0) player.fit(d.height);
    if (d.type === 'fencelab:title' && typeof d.title === 'string' && d.title) player.named(d.title);
  });

  customElements.define('fencelab-player', FencelabPlayer);
})();
