// Figures drawn in the page (ours): where a cell's fresh figure goes, and how it is described.
//
// The worker sends each figure a cell shows as a PNG ({type: "figure", plain, png, width,
// height}; figures.py draws it). The page built by myst-nb holds the figure the book was
// executed with: a <figure> with an id (what "Figure 15.2" links to), its <img> (alt text
// from the page's source) and its caption. A fresh figure takes the stored image's place
// inside that <figure>, which moves into the cell's output, so the caption, its number and
// the links to it stay; restoreFigures puts everything back before the cell runs again.
// A figure the stored cell did not have (a reader's new plot), or one stored without a
// caption, gets a <figure> of its own.

/** A stored figure (`figure`: null for an image without a caption), where it was in the page,
 * and the fresh image shown in its place.
 * @typedef {{figure: HTMLElement | null, img: HTMLImageElement, home: (Node & ParentNode) | null | undefined,
 *   next: ChildNode | null | undefined, fresh: HTMLImageElement | null}} FigureSlot */
/** @typedef {import("./output.mjs").CellOutput} CellOutput */
/** A cell, with what this module keeps on it.
 * @typedef {import("./cells.mjs").Cell & {figureSlots?: FigureSlot[], figuresShown?: number}} FigureCell */

/** @param {FigureCell} cell @returns {FigureSlot[]} */
function storedFigures(cell) {
  if (!cell.figureSlots) {
    const stored = cell.element.querySelector(".cell_output");
    cell.figureSlots = stored
      ? [...stored.querySelectorAll("img")].map((img) => {
          const figure = img.closest("figure");  // null for an image without a caption
          return { figure, img, home: figure?.parentNode, next: figure?.nextSibling, fresh: null };
        })
      : [];
  }
  return cell.figureSlots;
}

// The stored figure's description: its alt text, else its caption's.
/** @param {FigureSlot | undefined} slot @param {string} plain */
function describe(slot, plain) {
  if (!slot) return `A figure drawn by this cell: ${plain}`;
  const caption = slot.figure?.querySelector(".caption-text");
  return slot.img.alt || (caption ? /** @type {string} */ (caption.textContent).trim() : plain);
}

/** @param {FigureCell} cell @param {import("./messages.mjs").FigureMessage} figure */
export function showFigure(cell, { plain, png, width, height }) {
  const index = cell.figuresShown || 0;
  cell.figuresShown = index + 1;
  const slot = storedFigures(cell)[index];
  const img = document.createElement("img");
  img.className = "browser-run-figure-image";
  img.src = `data:image/png;base64,${png}`;
  img.width = width;  // the notebook's size (the PNG is drawn at twice it, for sharpness)
  img.height = height;
  img.alt = describe(slot, plain);
  let holder;
  if (slot?.figure) {
    slot.img.hidden = true;
    slot.img.after(img);
    slot.fresh = img;
    holder = slot.figure;
  } else {
    holder = document.createElement("figure");
    holder.append(img);
  }
  holder.dataset.kind = "image/png";
  holder.classList.add("browser-run-figure");
  // output.mjs: in order, in the notebook download too
  cell.output.addFigure(plain, png, holder);
}

// Before a cell runs again: every stored figure back where the page had it, as it was.
/** @param {FigureCell} cell */
export function restoreFigures(cell) {
  cell.figuresShown = 0;
  for (const slot of cell.figureSlots || []) {
    if (!slot.fresh || !slot.figure) continue;
    slot.fresh.remove();
    slot.fresh = null;
    slot.img.hidden = false;
    delete slot.figure.dataset.kind;
    delete slot.figure.dataset.plain;
    slot.figure.classList.remove("browser-run-figure");
    /** @type {Node} */ (slot.home).insertBefore(slot.figure, /** @type {Node | null} */ (slot.next));
  }
}
